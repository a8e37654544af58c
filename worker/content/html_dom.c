#include "worker/content/html_dom.h"

#include <limits.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include <libxml/HTMLparser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include "worker/content/attr_store.h"
#include "worker/content/dom_build.h"
#include "worker/content/html_trim.h"

/* Room for every attribute html_trim keeps (libxml2 drops duplicates). */
#define KEPT_ATTRS 64

/* libxml2's tree builder stopped there: a deeper element halted the parse
 * (xmlParserMaxDepth, 256) and so did text that grew one node past 10 MB
 * (XML_MAX_TEXT_LENGTH); the tree keeps both limits so it keeps its shape. */
#define LIBXML2_MAX_TEXT 10000000u

/* From this size a page's tree lives in mappings (dom_tree.h): its text
 * goes back as the renderer passes it, the rest when the tree is freed,
 * so neither sits beside the output. Below it the heap serves page after
 * page without fresh faults. */
#define MAPPED_TREE_PAGE (256u << 10)

/* A streamed page is handed back in steps this large. */
#define RELEASE_STEP (1u << 20)

/* What libxml2 has read of a streamed page. */
typedef struct {
    const vf_html_input *in;
    size_t pos;      /* bytes handed to libxml2 */
    size_t released; /* bytes reported consumed */
} stream;

typedef struct {
    htmlParserCtxtPtr ctxt;
    vf_dom_builder build;
    unsigned depth;
    unsigned verbatim_depth; /* inside pre, textarea...: whitespace is content */
    unsigned long long error_cost;
    bool stopped;
    bool oom;
} parse_state;

static parse_state *state_of(void *ctx)
{
    htmlParserCtxtPtr ctxt = ctx;
    return ctxt->_private;
}

static void stop(parse_state *st)
{
    if (!st->stopped) {
        st->stopped = true;
        xmlStopParser(st->ctxt);
    }
}

/* Out of memory ends the parse with no tree; a full tree keeps what it has. */
static void give_up(parse_state *st, vf_dom_status why)
{
    if (why == VF_DOM_OOM)
        st->oom = true;
    stop(st);
}

/* libxml2's tree builder split "prefix:local" names (xmlSplitQName) and
 * kept the local part: Word's <o:p> is a paragraph. Not when the name
 * starts or ends with the colon. */
static const char *local_name(const char *name)
{
    const char *colon = strchr(name, ':');
    return colon && colon != name && colon[1] ? colon + 1 : name;
}

static void write_attrs(char *dst, const void *pairs)
{
    vf_attr_run_write(dst, pairs);
}

static void on_start(void *ctx, const xmlChar *name, const xmlChar **attrs)
{
    parse_state *st = state_of(ctx);
    if (++st->depth > VF_HTML_MAX_DEPTH) {
        stop(st);
        return;
    }
    if (vf_trim_keeps_blanks(name))
        st->verbatim_depth++;
    if (st->build.depth > xmlParserMaxDepth) {
        stop(st);
        return;
    }
    const xmlChar *kept[KEPT_ATTRS];
    vf_trim_attrs(attrs, kept, KEPT_ATTRS);
    const char *const *pairs = (const char *const *)kept;
    /* A DOCTYPE (libxml2 keeps it as the document's first child) decides
     * where an element opened after the root closed goes. */
    if (!st->ctxt->myDoc) {
        give_up(st, VF_DOM_OOM); /* libxml2's startDocument ran out of memory */
        return;
    }
    bool beside_root = st->ctxt->myDoc->intSubset != NULL;
    vf_dom_status why;
    if (!vf_build_open(&st->build, local_name((const char *)name), vf_attr_run_size(pairs), write_attrs, pairs,
                       beside_root, &why))
        give_up(st, why);
}

static void on_end(void *ctx, const xmlChar *name)
{
    parse_state *st = state_of(ctx);
    if (st->depth)
        st->depth--;
    if (st->verbatim_depth && vf_trim_keeps_blanks(name))
        st->verbatim_depth--;
    vf_build_close(&st->build);
}

static void add_text(parse_state *st, int type, const xmlChar *ch, int len)
{
    if (len < 0)
        return;
    vf_node *last = vf_build_top_last(&st->build);
    if (last && last->type == type && last->aux + (size_t)len > LIBXML2_MAX_TEXT) {
        stop(st);
        return;
    }
    vf_dom_status why = vf_build_text(&st->build, type, (const char *)ch, (size_t)len);
    if (why != VF_DOM_OK)
        give_up(st, why);
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
    parse_state *st = state_of(ctx);
    if (!st->verbatim_depth &&
        vf_trim_blank_text(vf_build_top(&st->build), vf_build_top_last(&st->build), ch, len))
        return;
    add_text(st, VF_NODE_TEXT, ch, len);
}

static void on_raw_text(void *ctx, const xmlChar *ch, int len)
{
    parse_state *st = state_of(ctx);
    if (!vf_trim_raw_text(vf_build_top(&st->build)))
        add_text(st, VF_NODE_CDATA, ch, len);
}

static void silence(void *ctx, const char *msg, ...)
{
    (void)ctx, (void)msg;
}

/* libxml2 walks its whole open-element stack for a stray end tag or a misplaced
 * <body>, and reports each as an error: charging the current depth per error
 * caps that quadratic work (1000 open tags + 2M stray end tags took 4 s). */
static void on_error(void *ctx, xmlErrorPtr err)
{
    (void)err;
    parse_state *st = ctx;
    st->error_cost += st->depth + 1;
    if (st->error_cost > VF_HTML_ERROR_BUDGET)
        stop(st);
}

/* See reader_of: the input is UTF-8 by name, never sniffed or switched. */
static htmlParserCtxtPtr declare_utf8(htmlParserCtxtPtr ctxt)
{
    if (!ctxt)
        return NULL;
    ctxt->charset = XML_CHAR_ENCODING_UTF8;
    ctxt->encoding = xmlStrdup(BAD_CAST "UTF-8");
    if (!ctxt->encoding) {
        htmlFreeParserCtxt(ctxt);
        return NULL;
    }
    return ctxt;
}

/* libxml2's memory context holds its own copy of the input, so ours goes
 * back (input_done) before the tree is built. The input is declared UTF-8
 * by name, not through an encoding handler: a handler (even UTF-8's) runs
 * the whole copy through its converter into a third buffer. With the name
 * set libxml2 skips sniffing the first bytes; with HTML_PARSE_IGNORE_ENC no
 * <meta charset> can switch the decoder. */
static htmlParserCtxtPtr reader_of(const char *utf8, size_t len, void (*input_done)(void *), void *ctx)
{
    if (len > (size_t)INT_MAX)
        len = (size_t)INT_MAX; /* libxml2 takes an int; max_body is far below */
    htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(len ? utf8 : " ", len ? (int)len : 1);
    if (input_done)
        input_done(ctx);
    return declare_utf8(ctxt);
}

/* libxml2 pulls the page as it goes, the way it reads a file; what it has
 * pulled is its own copy (a few KiB it shrinks as it parses), so the pages
 * before that point go back to their owner. */
static int read_stream(void *ctx, char *buf, int len)
{
    stream *sm = ctx;
    size_t n = sm->in->len - sm->pos;
    if (len < 0)
        return -1;
    if (n > (size_t)len)
        n = (size_t)len;
    memcpy(buf, sm->in->data + sm->pos, n);
    sm->pos += n;
    if (sm->in->consumed && (sm->pos - sm->released >= RELEASE_STEP || sm->pos == sm->in->len)) {
        sm->released = sm->pos;
        sm->in->consumed(sm->in->ctx, sm->released);
    }
    return (int)n;
}

/* The same parser with the page streamed in: libxml2's file input, fed
 * from memory. */
static htmlParserCtxtPtr stream_reader_of(stream *sm)
{
    htmlParserCtxtPtr ctxt = htmlNewParserCtxt();
    if (!ctxt)
        return NULL;
    xmlParserInputBufferPtr buf = xmlParserInputBufferCreateIO(read_stream, NULL, sm, XML_CHAR_ENCODING_NONE);
    xmlParserInputPtr input = buf ? xmlNewIOInputStream(ctxt, buf, XML_CHAR_ENCODING_NONE) : NULL;
    if (!input) {
        if (buf)
            xmlFreeParserInputBuffer(buf);
        htmlFreeParserCtxt(ctxt);
        return NULL;
    }
    if (inputPush(ctxt, input) < 0) {
        xmlFreeInputStream(input);
        htmlFreeParserCtxt(ctxt);
        return NULL;
    }
    return declare_utf8(ctxt);
}

static vf_dom *parse(const char *utf8, size_t len, const vf_html_input *in, void (*input_done)(void *),
                     void *ctx)
{
    parse_state st = { 0 };
    stream sm = { .in = in };
    if (in)
        len = in->len;
    size_t cap = len > (SIZE_MAX - VF_HTML_TREE_SLACK) / VF_HTML_TREE_MULTIPLE
                     ? SIZE_MAX
                     : len * VF_HTML_TREE_MULTIPLE + VF_HTML_TREE_SLACK;
    vf_dom *dom = vf_dom_new(cap);
    if (dom && len >= MAPPED_TREE_PAGE)
        vf_dom_map(dom, len);
    if (!dom || !vf_build_init(&st.build, dom)) {
        vf_dom_free(dom);
        if (input_done)
            input_done(ctx);
        if (in && in->done)
            in->done(in->ctx);
        return NULL;
    }
    htmlParserCtxtPtr ctxt = in ? stream_reader_of(&sm) : reader_of(utf8, len, input_done, ctx);
    if (!ctxt) {
        if (in && in->done)
            in->done(in->ctx);
        vf_build_done(&st.build);
        vf_dom_free(dom);
        return NULL;
    }
    st.ctxt = ctxt;
    ctxt->_private = &st;
    ctxt->sax->startElement = on_start;
    ctxt->sax->endElement = on_end;
    ctxt->sax->characters = on_text;
    ctxt->sax->cdataBlock = on_raw_text;
    /* The pruner would remove them first thing. */
    ctxt->sax->comment = NULL;
    ctxt->sax->processingInstruction = NULL;
    htmlCtxtUseOptions(ctxt, HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                 HTML_PARSE_RECOVER | HTML_PARSE_IGNORE_ENC |
                                 HTML_PARSE_NODEFDTD | HTML_PARSE_COMPACT);
    xmlSetGenericErrorFunc(NULL, silence);
    xmlSetStructuredErrorFunc(&st, on_error);
    htmlParseDocument(ctxt);
    xmlSetStructuredErrorFunc(NULL, NULL);
    /* libxml2's document holds nothing but a DOCTYPE. */
    if (ctxt->myDoc)
        xmlFreeDoc(ctxt->myDoc);
    ctxt->myDoc = NULL;
    htmlFreeParserCtxt(ctxt);
    if (in && in->done)
        in->done(in->ctx);
    vf_build_done(&st.build);
    if (st.oom) {
        vf_dom_free(dom);
        return NULL;
    }
    vf_dom_trim(dom);
    return dom;
}

vf_dom *vf_html_parse(const char *utf8, size_t len, void (*input_done)(void *), void *ctx)
{
    return parse(utf8, len, NULL, input_done, ctx);
}

vf_dom *vf_html_parse_streamed(const vf_html_input *in)
{
    /* An empty page is one blank, as for vf_html_parse. */
    static const vf_html_input blank = { .data = " ", .len = 1 };
    vf_dom *dom = parse(NULL, 0, in->len ? in : &blank, NULL, NULL);
    if (!in->len && in->done)
        in->done(in->ctx);
    return dom;
}
