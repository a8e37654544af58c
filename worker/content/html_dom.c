#include "worker/content/html_dom.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include <libxml/HTMLparser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include "worker/content/attr_store.h"
#include "worker/content/html_trim.h"

/* Room for every attribute html_trim keeps (libxml2 drops duplicates). */
#define KEPT_ATTRS 64

typedef struct {
    htmlParserCtxtPtr ctxt;
    unsigned depth;
    unsigned verbatim_depth; /* inside pre, textarea...: whitespace is content */
    unsigned long long error_cost;
    vf_attr_arena *attrs;
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

static void on_start(void *ctx, const xmlChar *name, const xmlChar **attrs)
{
    parse_state *st = state_of(ctx);
    if (++st->depth > VF_HTML_MAX_DEPTH) {
        stop(st);
        return;
    }
    if (vf_trim_keeps_blanks(name))
        st->verbatim_depth++;
    const xmlChar *kept[KEPT_ATTRS];
    vf_trim_attrs(attrs, kept, KEPT_ATTRS);
    xmlNodePtr parent = st->ctxt->node;
    xmlSAX2StartElement(ctx, name, NULL);
    xmlNodePtr el = st->ctxt->node;
    if (!el || el == parent)
        return;
    /* libxml2 never reads psvi in an HTML tree; vf_dom_attr reads it. */
    bool oom;
    el->psvi = (void *)vf_attr_store(&st->attrs, kept, &oom);
    if (oom) {
        st->oom = true;
        stop(st);
    }
}

static void on_end(void *ctx, const xmlChar *name)
{
    parse_state *st = state_of(ctx);
    if (st->depth)
        st->depth--;
    if (st->verbatim_depth && vf_trim_keeps_blanks(name))
        st->verbatim_depth--;
    xmlSAX2EndElement(ctx, name);
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
    parse_state *st = state_of(ctx);
    if (!st->verbatim_depth && vf_trim_blank_text(st->ctxt->node, ch, len))
        return;
    xmlSAX2Characters(ctx, ch, len);
}

static void on_raw_text(void *ctx, const xmlChar *ch, int len)
{
    parse_state *st = state_of(ctx);
    if (!vf_trim_raw_text(st->ctxt->node))
        xmlSAX2CDataBlock(ctx, ch, len);
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

htmlDocPtr vf_html_parse(const char *utf8, size_t len, void (*input_done)(void *), void *ctx)
{
    parse_state st = { 0 };
    htmlParserCtxtPtr ctxt = reader_of(utf8, len, input_done, ctx);
    if (!ctxt)
        return NULL;
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
    htmlDocPtr doc = ctxt->myDoc;
    ctxt->myDoc = NULL;
    htmlFreeParserCtxt(ctxt);
    if (!doc)
        doc = htmlNewDocNoDtD(NULL, NULL);
    if (!doc || st.oom) {
        if (doc)
            xmlFreeDoc(doc);
        vf_attr_arena_free(st.attrs);
        return NULL;
    }
    doc->_private = st.attrs;
    return doc;
}

void vf_html_free(htmlDocPtr doc)
{
    if (!doc)
        return;
    vf_attr_arena_free(doc->_private);
    xmlFreeDoc(doc);
}
