/* A large page's UTF-8 is streamed into libxml2 (html_dom.c's
 * vf_html_parse_streamed) from a mapping of its own that goes back to the
 * kernel as the parse moves on (text_buf.c's mapped buffers), instead of
 * libxml2 copying the whole page first: the same text comes out, and the
 * parse holds no second copy of the page beside the tree (issue 15). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/content/extract.h"
#include "worker/content/extract_html.h"
#include "worker/content/html_dom.h"
#include "worker/content/text_buf.h"
#include "proc_peak.h"

#define PAGE (8u << 20)

/* A page of len bytes mixing what the parser's paths see: paragraphs,
 * entities, tables, scripts, links, a cut last element. */
static char *mixed_page(size_t len)
{
    static const char *const pieces[] = {
        "<p>Paragraph %u: the river &amp; the stone &mdash; a garden.</p>\n",
        "<table><tr><td>cell %u</td><td><a href=\"/x/%u\">link</a></td></tr></table>\n",
        "<script>var a%u = '<p>not text</p>';</script><div class=\"c\">block %u</div>\n",
        "<ul><li>item %u</li><li>item &hellip; <b>bold</b></li></ul><pre>  kept %u  </pre>\n",
    };
    char *b = malloc(len + 1);
    cr_assert_not_null(b);
    size_t pos = (size_t)snprintf(b, len + 1, "<!doctype html><html><head><title>stream</title></head><body>\n");
    for (unsigned n = 0; pos < len; n++) {
        char one[256];
        int w = snprintf(one, sizeof one, pieces[n % 4], n, n);
        size_t take = (size_t)w < len - pos ? (size_t)w : len - pos;
        memcpy(b + pos, one, take);
        pos += take;
    }
    b[len] = '\0';
    return b;
}

static void count_release(void *ctx, size_t upto)
{
    size_t *last = ctx;
    cr_assert_geq(upto, *last, "released bytes only grow");
    *last = upto;
}

/* The whole stage both ways: a parse of a copy, and the streamed one. */
Test(html_stream, a_streamed_page_renders_the_same_text_as_a_copied_one, .timeout = 60)
{
    for (size_t len = 0; len <= (3u << 20); len = len ? len * 8 : 100) {
        char *page = mixed_page(len);
        for (int markdown = 0; markdown < 2; markdown++) {
            vf_html_opts copied = { .markdown = markdown, .max_out = 4 * len + 64 };
            vf_html_opts streamed = copied;
            size_t released = 0;
            streamed.input_streamed = true;
            streamed.input_consumed = count_release;
            streamed.input_ctx = &released;
            size_t n1 = 0, n2 = 0;
            char *t1 = vf_html_extract(page, len, &copied, NULL, &n1);
            char *t2 = vf_html_extract(page, len, &streamed, NULL, &n2);
            cr_assert(t1 && t2);
            cr_assert_eq(n1, n2, "len %zu: %zu vs %zu bytes", len, n1, n2);
            cr_assert(memcmp(t1, t2, n1) == 0, "len %zu: texts differ", len);
            cr_assert_eq(released, len, "the whole page was handed back");
            free(t1);
            free(t2);
        }
        free(page);
    }
}

/* While an 8 MiB page is parsed its pages go back as the tree grows: the
 * peak stays under the tree plus half the page. With libxml2's copy of the
 * page (vf_html_parse) it was the tree plus the whole page. */
Test(html_stream, parsing_a_large_page_holds_no_copy_of_it, .timeout = 60)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer's shadow memory is no parse's real peak");
#endif
    char *page = mixed_page(PAGE);
    vf_tbuf in;
    vf_tbuf_init_mapped(&in, PAGE, PAGE);
    cr_assert(vf_tbuf_append(&in, page, PAGE));
    free(page);
    proc_reset_peak();
    long before = proc_status_kib("VmRSS");
    vf_html_input hi = { .data = in.data, .len = in.len, .consumed = vf_tbuf_release_before_cb, .done = vf_tbuf_free_cb,
                         .ctx = &in };
    vf_dom *d = vf_html_parse_streamed(&hi);
    cr_assert_not_null(d);
    long peak_kib = proc_status_kib("VmHWM") - before;
    long tree_kib = (long)(vf_dom_bytes(d) >> 10);
    cr_log_info("parse of 8 MiB: peak +%ld KiB over the page, tree %ld KiB", peak_kib, tree_kib);
    cr_assert_lt(peak_kib, tree_kib - (long)(PAGE >> 11), "peak +%ld KiB, tree %ld KiB", peak_kib, tree_kib);
    cr_assert_null(in.data, "done freed the input");
    vf_dom_free(d);
}

/* An empty page decodes to "", which the streamed parse reads like any page. */
Test(html_stream, an_empty_page_is_empty_text)
{
    vf_extracted ex;
    cr_assert(vf_extract(VF_MODE_RAW, NULL, 200, "text/html; charset=utf-8", "", 0, 1024, &ex));
    cr_assert_str_eq(ex.text, "");
    vf_extracted_free(&ex);
}

/* A given-back prefix is the kernel's again: whatever is mapped there next
 * (another thread's buffer, a large malloc) survives later releases and the
 * final free. Unmapping the whole range again killed such a neighbour: the
 * benchmark's in-process floor, 16 threads extracting 1 MiB pages, died in
 * memcpy on a mapping another thread's buffer had just unmapped. */
Test(html_stream, a_released_prefix_is_never_unmapped_again)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    vf_tbuf b;
    vf_tbuf_init_mapped(&b, 4 * pg, 4 * pg);
    cr_assert_not_null(b.data);
    char *fill = malloc(4 * pg);
    memset(fill, 'x', 4 * pg);
    cr_assert(vf_tbuf_append(&b, fill, 4 * pg - 1));
    free(fill);
    char *first = b.data;
    vf_tbuf_release_before(&b, pg + 7);
    /* Someone else's page where the buffer's first page was. */
    char *neighbour = mmap(first, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                           -1, 0);
    cr_assert_eq(neighbour, first, "the released page is free to map");
    neighbour[0] = 'n';
    vf_tbuf_release_before(&b, 2 * pg);
    cr_assert_eq(msync(neighbour, pg, MS_ASYNC), 0, "a second release unmapped the neighbour");
    cr_assert_eq(b.data[2 * pg], 'x', "the part not released is still readable");
    vf_tbuf_free(&b);
    cr_assert_eq(msync(neighbour, pg, MS_ASYNC), 0, "the free unmapped the neighbour");
    cr_assert_eq(neighbour[0], 'n');
    munmap(neighbour, pg);
}

/* ---- a body that is UTF-8 already is parsed where it lies -------------- */

typedef struct {
    size_t consumed; /* the last upto body_consumed was given */
    unsigned consumed_calls;
    unsigned done_calls;
} body_log;

static void log_consumed(void *ctx, size_t upto)
{
    body_log *l = ctx;
    cr_assert_geq(upto, l->consumed, "released bytes only grow");
    l->consumed = upto;
    l->consumed_calls++;
}

static void log_done(void *ctx)
{
    body_log *l = ctx;
    l->done_calls++;
}

static char *extract_logged(const char *body, size_t len, const char *ctype, body_log *log, size_t *out_len)
{
    vf_extract_opts o = { .body_done = log_done, .body_consumed = log_consumed, .body_ctx = log };
    vf_extracted ex;
    cr_assert(vf_extract_with(&o, VF_MODE_RAW, NULL, 200, ctype, body, len, 4 * len + 64, &ex));
    cr_assert_eq(log->done_calls, 1, "body_done is called once");
    char *text = malloc(ex.text_len + 1);
    cr_assert_not_null(text);
    memcpy(text, ex.text, ex.text_len + 1);
    *out_len = ex.text_len;
    cr_assert_str_eq(ex.meta.charset, "utf-8");
    vf_extracted_free(&ex);
    return text;
}

/* The page read in place gives the text its decoded copy gives: the same
 * bytes with a NUL in them (dropped by decoding) take the copying path. The
 * owner hears how far the parser has read, BOM included, up to the end. */
Test(html_stream, a_utf8_body_is_read_in_place_with_the_text_of_a_copy, .timeout = 120)
{
    static const char bom[] = "\xEF\xBB\xBF";
    static const char *const ctypes[] = { "text/html; charset=utf-8", "text/html" };
    for (size_t len = 100; len <= (3u << 20); len *= 8) {
        char *page = mixed_page(len);
        for (int with_bom = 0; with_bom < 2; with_bom++) {
            size_t skip = with_bom ? 3 : 0, n = skip + len;
            char *body = malloc(n + 2), *nul = malloc(n + 2);
            cr_assert(body && nul);
            memcpy(body, bom, skip);
            memcpy(body + skip, page, len + 1);
            /* The NUL goes after the page's first tag. */
            size_t at = skip + (size_t)(strchr(page, '>') - page) + 1;
            memcpy(nul, body, at);
            nul[at] = '\0';
            memcpy(nul + at + 1, body + at, n - at + 1);
            for (size_t c = 0; c < 2; c++) {
                body_log in_place = { 0 }, copied = { 0 };
                size_t n1, n2;
                char *t1 = extract_logged(body, n, ctypes[c], &in_place, &n1);
                char *t2 = extract_logged(nul, n + 1, ctypes[c], &copied, &n2);
                cr_assert_eq(n1, n2, "len %zu bom %d: %zu vs %zu bytes", len, with_bom, n1, n2);
                cr_assert(memcmp(t1, t2, n1) == 0, "len %zu bom %d: texts differ", len, with_bom);
                cr_assert_gt(in_place.consumed_calls, 0, "len %zu: the parser read the body itself", len);
                cr_assert_eq(in_place.consumed, n, "len %zu bom %d: read up to %zu of %zu", len, with_bom,
                             in_place.consumed, n);
                cr_assert_eq(copied.consumed_calls, 0, "a decoded copy is released by its own buffer");
                free(t1);
                free(t2);
            }
            free(body);
            free(nul);
        }
        free(page);
    }
}

/* Bytes that decoding would change are never read in place: an invalid
 * byte comes out as U+FFFD. */
Test(html_stream, a_body_decoding_changes_is_read_from_its_copy)
{
    static const char page[] = "<html><body><p>caf\xe9 au lait and more words</p></body></html>";
    body_log log = { 0 };
    size_t n;
    char *text = extract_logged(page, sizeof page - 1, "text/html; charset=utf-8", &log, &n);
    cr_assert(strstr(text, "caf\xef\xbf\xbd au lait"), "got: %s", text);
    cr_assert_eq(log.consumed_calls, 0);
    free(text);
}
