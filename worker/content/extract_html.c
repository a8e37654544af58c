#include "worker/content/extract_html.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include "worker/content/text_buf.h"

typedef struct {
    vf_tbuf out;
    size_t max_out;
    htmlParserCtxtPtr ctxt;
    unsigned depth;        /* open elements */
    unsigned skip_depth;   /* open script/style/noscript/template */
    unsigned pre_depth;    /* open pre/textarea: newlines there are real */
    bool pending_space;
    bool pending_newline;
    bool stopped;
    unsigned long long error_cost; /* sum of depth over parse errors so far */
} extract_state;

static const char *const skipped_elements[] = {
    "script", "style", "noscript", "template", NULL,
};

/* Elements whose boundaries end a line of text. */
static const char *const block_elements[] = {
    "address", "article", "aside", "blockquote", "body", "br", "caption", "dd",
    "details", "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header",
    "hgroup", "hr", "html", "legend", "li", "main", "nav", "ol", "option", "p",
    "pre", "section", "summary", "table", "tbody", "textarea", "tfoot", "thead",
    "title", "tr", "ul", NULL,
};

/* Table cells are separated by a space, not a line. */
static const char *const cell_elements[] = { "td", "th", NULL };

/* Called twice per element, so the first letter screens out most entries
 * before a full comparison (the lists are lowercase). */
static bool in_list(const char *const *list, const xmlChar *name)
{
    unsigned char first = (unsigned char)(name[0] | 0x20);
    for (; *list; list++)
        if ((unsigned char)(*list)[0] == first && strcasecmp(*list, (const char *)name) == 0)
            return true;
    return false;
}

static bool is_pre_like(const xmlChar *name)
{
    return strcasecmp((const char *)name, "pre") == 0 || strcasecmp((const char *)name, "textarea") == 0;
}

static void stop(extract_state *st)
{
    if (!st->stopped) {
        st->stopped = true;
        xmlStopParser(st->ctxt);
    }
}

static void emit(extract_state *st, const char *s, size_t n)
{
    size_t room = st->max_out - st->out.len;
    if (n > room) {
        /* Full: keep whole characters only, then stop gathering. */
        while (room > 0 && ((unsigned char)s[room] & 0xC0) == 0x80)
            room--;
        vf_tbuf_append(&st->out, s, room);
        stop(st);
        return;
    }
    if (!vf_tbuf_append(&st->out, s, n))
        stop(st); /* out of memory */
}

static void mark_boundary(extract_state *st, const xmlChar *name)
{
    if (in_list(block_elements, name))
        st->pending_newline = true;
    else if (in_list(cell_elements, name))
        st->pending_space = true;
}

static void on_start(void *ctx, const xmlChar *name, const xmlChar **attrs)
{
    (void)attrs;
    extract_state *st = ctx;
    if (++st->depth > VF_HTML_MAX_DEPTH) {
        stop(st);
        return;
    }
    /* Boundaries inside dropped content (a <p> in a <template>) do not count. */
    if (st->skip_depth == 0)
        mark_boundary(st, name);
    if (in_list(skipped_elements, name))
        st->skip_depth++;
    if (is_pre_like(name))
        st->pre_depth++;
}

static void on_end(void *ctx, const xmlChar *name)
{
    extract_state *st = ctx;
    if (st->depth)
        st->depth--;
    if (in_list(skipped_elements, name) && st->skip_depth)
        st->skip_depth--;
    if (is_pre_like(name) && st->pre_depth)
        st->pre_depth--;
    if (st->skip_depth == 0)
        mark_boundary(st, name);
}

/* Length of an ASCII blank or U+00A0 (layout &nbsp;) at p, else 0. */
static size_t blank_len(const xmlChar *p, size_t avail)
{
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f')
        return 1;
    if (avail >= 2 && p[0] == 0xC2 && p[1] == 0xA0)
        return 2;
    return 0;
}

static void flush_pending(extract_state *st)
{
    if (st->out.len == 0) {
        st->pending_newline = st->pending_space = false;
        return;
    }
    if (st->pending_newline)
        emit(st, "\n", 1);
    else if (st->pending_space)
        emit(st, " ", 1);
    st->pending_newline = st->pending_space = false;
}

static void on_text(void *ctx, const xmlChar *s, int len)
{
    extract_state *st = ctx;
    if (st->skip_depth || st->stopped || len <= 0)
        return;
    size_t n = (size_t)len;
    size_t i = 0;
    while (i < n && !st->stopped) {
        size_t b = blank_len(s + i, n - i);
        if (b) {
            if (st->pre_depth && s[i] == '\n')
                st->pending_newline = true;
            else
                st->pending_space = true;
            i += b;
            continue;
        }
        /* A word, and every following " word" separated by exactly one
         * space: what collapsing would emit anyway, copied in one go. */
        size_t run = i;
        for (;;) {
            while (run < n && !blank_len(s + run, n - run))
                run++;
            if (run + 1 < n && s[run] == ' ' && !blank_len(s + run + 1, n - run - 1))
                run++;
            else
                break;
        }
        flush_pending(st);
        emit(st, (const char *)s + i, run - i);
        i = run;
    }
}

/* script/style bodies arrive as CDATA; they are never page text. */
static void on_cdata(void *ctx, const xmlChar *s, int len)
{
    (void)ctx, (void)s, (void)len;
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
    extract_state *st = ctx;
    st->error_cost += st->depth + 1;
    if (st->error_cost > VF_HTML_ERROR_BUDGET)
        stop(st);
}

/* A SAX-only HTML parser over [utf8, utf8+len) reporting to st; NULL when
 * out of memory. */
static htmlParserCtxtPtr new_parser(const char *utf8, int len, extract_state *st)
{
    htmlParserCtxtPtr ctxt = htmlCreateMemoryParserCtxt(len ? utf8 : " ", len ? len : 1);
    if (!ctxt)
        return NULL;
    htmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.startElement = on_start;
    sax.endElement = on_end;
    sax.characters = on_text;
    sax.ignorableWhitespace = on_text;
    sax.cdataBlock = on_cdata;
    memcpy(ctxt->sax, &sax, sizeof sax);
    /* Declare the input UTF-8 (libxml2's built-in handler, no iconv): without
     * it the HTML parser falls back to ISO-8859-1, and with it an in-document
     * charset declaration can no longer switch the decoder. */
    xmlCharEncodingHandlerPtr utf8_handler = xmlFindCharEncodingHandler("UTF-8");
    if (!utf8_handler || xmlSwitchToEncoding(ctxt, utf8_handler) != 0) {
        htmlFreeParserCtxt(ctxt);
        return NULL;
    }
    ctxt->userData = st;
    st->ctxt = ctxt;
    /* IGNORE_ENC as a second lock on the same door: a <meta charset> must not
     * make libxml2 look up an iconv converter (gconv files are out of reach). */
    htmlCtxtUseOptions(ctxt, HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                 HTML_PARSE_RECOVER | HTML_PARSE_IGNORE_ENC |
                                 HTML_PARSE_NOIMPLIED | HTML_PARSE_NODEFDTD);
    return ctxt;
}

char *vf_html_to_text(const char *utf8, size_t len, size_t max_out, size_t *out_len)
{
    extract_state st;
    memset(&st, 0, sizeof st);
    vf_tbuf_init(&st.out, max_out);
    st.max_out = max_out;
    *out_len = 0;
    if (len > (size_t)INT_MAX)
        len = (size_t)INT_MAX; /* libxml2 takes an int; max_body is far below */

    xmlSetGenericErrorFunc(NULL, silence);
    xmlSetStructuredErrorFunc(&st, on_error);
    htmlParserCtxtPtr ctxt = new_parser(utf8, (int)len, &st);
    if (ctxt) {
        htmlParseDocument(ctxt);
        if (ctxt->myDoc)
            xmlFreeDoc(ctxt->myDoc); /* none expected: no SAX handler builds one */
        htmlFreeParserCtxt(ctxt);
    }
    xmlSetStructuredErrorFunc(NULL, NULL);
    if (!ctxt) {
        vf_tbuf_free(&st.out);
        return NULL;
    }
    return vf_tbuf_take(&st.out, out_len);
}
