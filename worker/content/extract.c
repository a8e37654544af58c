#include "worker/content/extract.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "worker/content/base64.h"
#include "worker/content/charset.h"
#include "worker/content/extract_html.h"
#include "worker/content/json_content.h"
#include "worker/content/text_buf.h"

static bool media_is(const char *m, size_t n, const char *want)
{
    return strlen(want) == n && strncasecmp(m, want, n) == 0;
}

static bool media_has_suffix(const char *m, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && strncasecmp(m + n - k, suffix, k) == 0;
}

vf_body_kind vf_body_kind_of(const char *ct)
{
    if (!ct)
        return VF_KIND_OTHER;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    if (media_is(ct, n, "text/html") || media_is(ct, n, "application/xhtml+xml"))
        return VF_KIND_HTML;
    if ((n > 5 && strncasecmp(ct, "text/", 5) == 0) || media_is(ct, n, "application/json") ||
        media_is(ct, n, "application/xml"))
        return VF_KIND_TEXT;
    if (n > 12 && strncasecmp(ct, "application/", 12) == 0 &&
        (media_has_suffix(ct, n, "+json") || media_has_suffix(ct, n, "+xml")))
        return VF_KIND_TEXT;
    return VF_KIND_OTHER;
}

/* The provider's title for the page, when its answer has one: metadata is
 * optional, so a title pointer that finds no string leaves the meta empty. */
static bool json_title(const char *pointer, const char *body, size_t len, vf_extracted *out)
{
    char *title = NULL;
    size_t title_len = 0;
    char ignored[VF_IPC_MAX_DETAIL];
    vf_json_status st = vf_json_extract(body, len, pointer, VF_META_MAX_TITLE, &title, &title_len, ignored,
                                        sizeof ignored);
    if (st == VF_JSON_NOMEM)
        return false;
    if (st == VF_JSON_OK && title_len > 0) {
        /* The meta map's required sizes: the provider's text is the whole page. */
        uint64_t chars = 0;
        for (size_t i = 0; i < out->text_len; i++)
            chars += ((unsigned char)out->text[i] & 0xC0) != 0x80;
        out->meta.title = title;
        out->meta.extract = strdup("page");
        out->meta.page_chars = out->meta.main_chars = chars;
        out->has_meta = out->meta.extract != NULL;
        return out->has_meta;
    } else {
        free(title);
    }
    return true;
}

static bool malformed(vf_extracted *out)
{
    out->malformed = true;
    free(out->text);
    out->text = calloc(1, 1);
    out->text_len = 0;
    return out->text != NULL;
}

/* The pointed-to string is the page itself (VF_FIELD_*): decoded when it is
 * base64, then read as the HTML or text page it is. */
static bool extract_field(const vf_extract_opts *opts, const char *pointer, const char *body, size_t len,
                          size_t max_text, vf_extracted *out)
{
    char *page = NULL;
    size_t page_len = 0;
    /* A JSON string never decodes to more bytes than it spans. */
    vf_json_status st = vf_json_extract(body, len, pointer, len, &page, &page_len, out->detail,
                                        sizeof out->detail);
    if (st == VF_JSON_NOMEM)
        return false;
    if (st != VF_JSON_OK)
        return malformed(out);
    if ((opts->field & VF_FIELD_BASE64) && !vf_base64_decode_in_place(page, page_len, &page_len)) {
        free(page);
        snprintf(out->detail, sizeof out->detail, "json pointer '%.200s' is not base64", pointer);
        return malformed(out);
    }
    /* The provider's body is no longer read; the page is a copy. */
    if (opts->body_done)
        opts->body_done(opts->body_ctx);
    vf_extract_opts page_opts = { .render = opts->render };   /* links stay as written */
    /* A JSON string is Unicode already; decoded bytes say their own charset. */
    static const char *const ctypes[2][2] = { { "text/plain; charset=utf-8", "text/plain" },
                                              { "text/html; charset=utf-8", "text/html" } };
    const char *ctype = ctypes[(opts->field & VF_FIELD_HTML) != 0][(opts->field & VF_FIELD_BASE64) != 0];
    bool ok = vf_extract_with(&page_opts, VF_MODE_RAW, NULL, 200, ctype, page, page_len, max_text, out);
    free(page);
    return ok;
}

static bool extract_json(const vf_extract_opts *opts, const char *pointer, const char *body, size_t len,
                         size_t max_text, vf_extracted *out)
{
    if (opts->field)
        return extract_field(opts, pointer ? pointer : "", body, len, max_text, out);
    vf_json_status st = vf_json_extract(body, len, pointer ? pointer : "", max_text,
                                        &out->text, &out->text_len, out->detail,
                                        sizeof out->detail);
    if (st == VF_JSON_NOMEM)
        return false;
    if (st != VF_JSON_OK)
        return malformed(out);
    out->ctype_is_plain = true;
    return opts->title_pointer ? json_title(opts->title_pointer, body, len, out) : true;
}

bool vf_extract(vf_response_mode mode, const char *json_pointer, int http_status,
                const char *content_type, const char *body, size_t len,
                size_t max_text, vf_extracted *out)
{
    static const vf_extract_opts defaults = { 0 };
    return vf_extract_with(&defaults, mode, json_pointer, http_status, content_type, body, len,
                           max_text, out);
}

static vf_links_style links_of(uint32_t render)
{
    if (render & VF_RENDER_LINKS_NONE)
        return VF_LINKS_NONE;
    return (render & VF_RENDER_LINKS_LIST) ? VF_LINKS_LIST : VF_LINKS_INLINE;
}

/* Pages from this size get a mapped UTF-8 copy: below it the heap serves
 * page after page without a fresh mapping to fault in. */
#define MAPPED_PAGE_MIN (256u << 10)

/* A body that is UTF-8 already, read by the parser where it lies. */
typedef struct {
    const vf_extract_opts *opts;
    size_t skip; /* a BOM before what the parser reads */
} body_in_place;

static void body_read(void *ctx)
{
    const body_in_place *b = ctx;
    if (b->opts->body_done)
        b->opts->body_done(b->opts->body_ctx);
}

static void body_read_before(void *ctx, size_t upto)
{
    const body_in_place *b = ctx;
    if (b->opts->body_consumed)
        b->opts->body_consumed(b->opts->body_ctx, b->skip + upto);
}

bool vf_extract_with(const vf_extract_opts *opts, vf_response_mode mode, const char *json_pointer,
                     int http_status, const char *content_type, const char *body, size_t len,
                     size_t max_text, vf_extracted *out)
{
    memset(out, 0, sizeof *out);
    /* JSON mode judges a provider's answer; an HTTP error from the provider
     * stays an HTTP error (its body is passed through like any other). */
    if (mode == VF_MODE_JSON && http_status >= 200 && http_status < 300)
        return extract_json(opts, json_pointer, body, len, max_text, out);

    vf_body_kind kind = vf_body_kind_of(content_type);
    if (kind == VF_KIND_OTHER) {
        out->text = calloc(1, 1);
        return out->text != NULL;
    }
    const unsigned char *raw = (const unsigned char *)body;
    char bad[48];
    vf_charset cs = vf_charset_detect_strict(raw, len, content_type, kind == VF_KIND_HTML, bad,
                                             sizeof bad);
    if (bad[0]) {
        /* Never guessed: the broker calls the page unusable, saying why. */
        out->unsupported_charset = true;
        snprintf(out->detail, sizeof out->detail, "unsupported charset '%s'", bad);
        out->text = calloc(1, 1);
        return out->text != NULL;
    }
    /* At most 3 UTF-8 bytes per input byte, so this never cuts HTML input. */
    size_t utf8_cap = kind == VF_KIND_HTML ? (len <= SIZE_MAX / 3 ? len * 3 : SIZE_MAX) : max_text;
    if (kind == VF_KIND_TEXT) {
        out->text = vf_to_utf8(raw, len, cs, utf8_cap, &out->text_len);
        return out->text != NULL;
    }
    out->has_meta = true;
    vf_html_opts ho = { .markdown = !(opts->render & VF_RENDER_TEXT),
                        .whole_page = (opts->render & VF_RENDER_PAGE) != 0,
                        .links = links_of(opts->render), .page_url = opts->page_url,
                        .max_out = max_text, .input_streamed = true, .out_map_len = &out->text_map_len };
    body_in_place in_place = { .opts = opts };
    vf_tbuf utf8 = { 0 };
    const char *page;
    size_t page_len;
    if (len > 0 && vf_utf8_as_is(raw, len, cs, &in_place.skip)) {
        /* Most pages are UTF-8 already: the parser reads the body itself,
         * and its owner gives back what has been read (body_consumed). */
        ho.input_done = body_read;
        ho.input_consumed = body_read_before;
        ho.input_ctx = &in_place;
        page = body + in_place.skip;
        page_len = len - in_place.skip;
    } else {
        /* Otherwise a large page's UTF-8 lives in a mapping of its own,
         * which the parser (pulling it in as it goes) hands back to the
         * kernel: the tree grows while the page shrinks. */
        if (len >= MAPPED_PAGE_MIN)
            vf_tbuf_init_mapped(&utf8, utf8_cap, len);
        else
            vf_tbuf_init(&utf8, utf8_cap);
        vf_to_utf8_into(raw, len, cs, &utf8);
        if (!utf8.data)
            vf_tbuf_append(&utf8, "", 0); /* an empty page is "", never NULL */
        if (utf8.oom) {
            vf_tbuf_free(&utf8);
            return false;
        }
        /* The body is freed as soon as it is decoded: the DOM is built while
         * only one copy of the page is held (and less of it as the parse
         * goes), and the render runs beside the DOM alone. */
        if (opts->body_done)
            opts->body_done(opts->body_ctx);
        ho.input_done = vf_tbuf_free_cb;
        ho.input_consumed = vf_tbuf_release_before_cb;
        ho.input_ctx = &utf8;
        page = utf8.data;
        page_len = utf8.len;
    }
    out->text = vf_html_extract(page, page_len, &ho, &out->meta, &out->text_len);
    vf_tbuf_free(&utf8);
    out->meta.charset = strdup(vf_charset_name(cs));
    return out->text != NULL && out->meta.charset != NULL;
}

void vf_extracted_free(vf_extracted *ex)
{
    vf_tbuf_unmap_taken(ex->text, ex->text_map_len);
    ex->text_map_len = 0;
    vf_page_meta_clear(&ex->meta);
    ex->text = NULL;
    ex->has_meta = false;
}
