/* HTML -> text, charset decoding and the text stage dispatch, unconfined. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker/content/charset.h"
#include "worker/content/extract.h"
#include "worker/content/extract_html.h"

static char *render(const char *html, size_t max_out)
{
    size_t n;
    char *t = vf_html_to_text(html, strlen(html), max_out, &n);
    cr_assert_not_null(t);
    cr_assert_eq(strlen(t), n);
    return t;
}

Test(extract_html, script_style_noscript_template_are_dropped)
{
    char *t = render("<html><head><style>body{x:1}</style><script>var s='<p>no</p>';"
                     "</script></head><body>keep<noscript>nojs</noscript>"
                     "<template><p>tpl</p></template> this</body></html>",
                     4096);
    cr_assert_str_eq(t, "keep this");
    free(t);
}

Test(extract_html, entities_are_decoded)
{
    char *t = render("<p>a &amp; b &lt;c&gt; &quot;d&quot; &#233;&#x20AC; &eacute;</p>", 4096);
    cr_assert_str_eq(t, "a & b <c> \"d\" \xc3\xa9\xe2\x82\xac \xc3\xa9");
    free(t);
}

Test(extract_html, whitespace_collapses_and_blocks_break_lines)
{
    char *t = render("<body>\n  <h1> Title </h1>\n<p>one\t\n two&nbsp;&nbsp;three</p>"
                     "<ul><li>x</li><li>y</li></ul>in<b>line</b> <i>words</i>"
                     "<table><tr><td>c1</td><td>c2</td></tr></table>a<br>b</body>",
                     4096);
    cr_assert_str_eq(t, "Title\n\none two three\n\n\xe2\x80\xa2 x\n\xe2\x80\xa2 y\n\ninline words\n\n"
                        "c1\tc2\n\na\nb");
    free(t);
}

/* Words joined by one plain space are copied as a block; every other gap
 * still collapses to one space, and a trailing space still waits for a word. */
Test(extract_html, single_spaces_and_other_gaps_collapse_alike)
{
    char *t = render("<p>a b c  d\te\xc2\xa0" "f \n g </p><p>h i</p> j", 4096);
    cr_assert_str_eq(t, "a b c d e f g\n\nh i\n\nj");
    free(t);
    t = render("<pre>x y  z\nw v</pre>", 4096);
    cr_assert_str_eq(t, "x y  z\nw v"); /* pre keeps its blanks */
    free(t);
    /* The cap falls inside a space-joined block exactly where it would have. */
    t = render("<p>ab cd ef</p>", 5);
    cr_assert_str_eq(t, "ab cd");
    free(t);
}

/* The parser leaves out what no reader uses (html_trim.c); what readers use
 * must survive: blanks inside <pre> and between inline boxes, JSON-LD (but
 * not other script bodies), the attributes the pruner and renderer read. */
/* Plain ASCII words are written in bulk between the characters Markdown
 * escapes, blanks, box edges and line starts; each of those still gets the
 * character-by-character treatment, in both formats. */
Test(extract_html, bulk_words_keep_escapes_gaps_and_glue)
{
    const char *html = "<html><body><article><p>snake_case and _lead *star* [x] a\\b `c` &lt;tag&gt; x_ y</p>"
                       "<p>&gt; not a quote, a#b c&gt;d e__f</p><blockquote>q one   two</blockquote>"
                       "<ul><li>i one</li><li>ii two<b>bold</b>x</li></ul>"
                       "<table><tr><td>a b</td><td>c  d_e</td></tr></table>"
                       "<p>Home<span>News</span> 250,000<span>The</span> end</p></article></body></html>";
    const char *want[2] = {
        "snake_case and _lead \\*star\\* \\[x\\] a\\\\b \\`c\\` \\<tag> x_ y\n\n"
        "> not a quote, a#b c>d e_\\_f\n\n> q one two\n\n- i one\n- ii twoboldx\n\n"
        "| a b | c d_e |\n| --- | --- |\n\nHome News 250,000 The end",
        "snake_case and _lead *star* [x] a\\b `c` <tag> x_ y\n\n> not a quote, a#b c>d e__f\n\n"
        "q one two\n\n\xe2\x80\xa2 i one\n\xe2\x80\xa2 ii twoboldx\n\na b\tc d_e\n\nHome News 250,000 The end",
    };
    for (int text = 0; text < 2; text++) {
        vf_extracted ex = {0};
        vf_extract_opts xo = {.render = text ? VF_RENDER_TEXT : 0};
        cr_assert(vf_extract_with(&xo, VF_MODE_RAW, NULL, 200, "text/html", html, strlen(html), 4096, &ex));
        cr_expect_str_eq(ex.text, want[text]);
        vf_extracted_free(&ex);
    }
}

Test(extract_html, trimmed_tree_keeps_what_readers_use)
{
    char *t = render("<pre>  <b>a</b>\n  \n<span>b</span></pre>"
                     "<div data-x=\"1\" onclick=\"f()\"><p>x</p> <b>y</b> <i>z</i></div>"
                     "<p>one<span hidden data-y=\"2\">secret</span> two</p>", 4096);
    cr_assert_str_eq(t, "  a\n  \nb\n\nx\n\ny z\n\none two");
    free(t);
    static const char page[] =
        "<html><head><script type=\"application/ld+json\">{\"datePublished\": \"2024-05-06T07:08:09Z\"}"
        "</script><script>var d = {\"datePublished\": \"1999-01-01\"};</script></head>"
        "<body><!-- c --><p>text <a href=\"/x\" data-track=\"1\">link</a></p></body></html>";
    vf_html_opts o = { .markdown = true, .whole_page = true, .links = VF_LINKS_INLINE,
                       .page_url = "https://example.com/a/", .max_out = 4096 };
    vf_page_meta m = { 0 };
    size_t n;
    t = vf_html_extract(page, sizeof page - 1, &o, &m, &n);
    cr_assert_not_null(t);
    cr_assert_str_eq(t, "text [link](https://example.com/x)");
    cr_assert_str_eq(m.published, "2024-05-06T07:08:09Z");
    free(t);
    vf_page_meta_clear(&m);
}

Test(extract_html, pre_keeps_its_line_breaks)
{
    char *t = render("<pre>line 1\nline 2</pre>", 4096);
    cr_assert_str_eq(t, "line 1\nline 2");
    free(t);
}

Test(extract_html, output_is_bounded_on_a_character_boundary)
{
    /* "é" is two bytes; a 5-byte cap must not split the third one. */
    char *t = render("<p>\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9</p>", 5);
    cr_assert_str_eq(t, "\xc3\xa9\xc3\xa9");
    free(t);
    t = render("<p>abcdefghij</p>", 4);
    cr_assert_str_eq(t, "abcd");
    free(t);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static char *repeat(const char *unit, size_t times, const char *tail)
{
    size_t u = strlen(unit), tl = strlen(tail);
    char *s = malloc(u * times + tl + 1);
    cr_assert_not_null(s);
    for (size_t i = 0; i < times; i++)
        memcpy(s + i * u, unit, u);
    memcpy(s + u * times, tail, tl + 1);
    return s;
}

Test(extract_html, hundred_thousand_nested_tags_are_cheap)
{
    char *doc = repeat("<div>", 100000, "deep");
    char *head = malloc(strlen(doc) + 32);
    strcpy(head, "<p>before</p>");
    strcat(head, doc);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n;
    char *t = vf_html_to_text(head, strlen(head), 1 << 20, &n);
    double s = seconds_since(&t0);
    cr_assert_not_null(t);
    cr_assert_lt(s, 1.0, "took %.2f s", s);
    /* Text before the nesting limit survives. */
    cr_assert(strncmp(t, "before", 6) == 0, "%s", t);
    free(t);
    free(doc);
    free(head);
}

Test(extract_html, stray_end_tags_over_deep_stack_are_bounded)
{
    /* libxml2 searches its whole open-element stack for each unmatched end tag:
     * 1000 open tags + 2M stray end tags took 4 s before the error budget. */
    char *open_tags = repeat("<b>", 1000, "");
    char *stray = repeat("</i>", 2000000, "");
    size_t a = strlen(open_tags), b = strlen(stray);
    char *doc = malloc(a + b + 16);
    memcpy(doc, "start", 5);
    memcpy(doc + 5, open_tags, a);
    memcpy(doc + 5 + a, stray, b + 1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n;
    char *t = vf_html_to_text(doc, strlen(doc), 1 << 20, &n);
    double s = seconds_since(&t0);
    cr_assert_not_null(t);
    cr_assert_lt(s, 1.0, "took %.2f s", s);
    cr_assert_str_eq(t, "start");
    free(t);
    free(doc);
    free(open_tags);
    free(stray);
}

Test(extract_html, empty_and_tagless_input)
{
    char *t = render("", 100);
    cr_assert_str_eq(t, "");
    free(t);
    t = render("just text", 100);
    cr_assert_str_eq(t, "just text");
    free(t);
}

/* ---- charset ---------------------------------------------------------- */

static char *decode(const char *in, size_t n, vf_charset cs)
{
    size_t len;
    char *out = vf_to_utf8((const unsigned char *)in, n, cs, 1 << 20, &len);
    cr_assert_not_null(out);
    cr_assert_eq(strlen(out), len);
    return out;
}

/* vf_utf8_as_is says yes exactly when decoding gives the bytes after its
 * skip back unchanged: hand-picked edges, then random bytes biased towards
 * UTF-8's lead and continuation bytes, NUL and a BOM. */
static void check_as_is(const unsigned char *in, size_t n, vf_charset cs)
{
    size_t skip = 99, len = 0;
    bool as_is = vf_utf8_as_is(in, n, cs, &skip);
    char *out = vf_to_utf8(in, n, cs, 4 * n + 4, &len);
    cr_assert_not_null(out);
    bool same_skip0 = len == n && memcmp(out, in, n) == 0;
    bool same_skip3 = n >= 3 && len == n - 3 && memcmp(out, in + 3, n - 3) == 0;
    if (as_is) {
        cr_assert(skip == 0 || skip == 3, "skip %zu", skip);
        cr_assert(skip == 0 ? same_skip0 : same_skip3, "as is, but decoding changed %zu bytes", n);
    } else {
        cr_assert_eq(skip, 0);
        if (cs == VF_CS_UTF8 || cs == VF_CS_UNKNOWN)
            cr_assert(!same_skip0 && !same_skip3, "decoding kept %zu bytes, yet not as is", n);
    }
    free(out);
}

#define S(lit) lit, sizeof lit - 1
Test(charset, utf8_is_read_as_is_exactly_when_decoding_keeps_it)
{
    static const struct {
        const char *s;
        size_t n;
        vf_charset cs;
        bool as_is;
    } cases[] = {
        { S("plain ascii"), VF_CS_UTF8, true },
        { S("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), VF_CS_UTF8, true },
        { S("\xEF\xBB\xBF" "bom"), VF_CS_UTF8, true },     /* skip 3 */
        { S("\xEF\xBB\xBF" "bom"), VF_CS_UNKNOWN, true },  /* U+FEFF kept */
        { S("caf\xe9"), VF_CS_UTF8, false },             /* invalid: U+FFFD */
        { S("a\0b"), VF_CS_UTF8, false },                /* NUL dropped */
        { S("cut \xe2\x82"), VF_CS_UTF8, false },        /* truncated at the end */
        { S("\xc0\xaf"), VF_CS_UTF8, false },            /* overlong */
        { S("\xed\xa0\x80"), VF_CS_UTF8, false },        /* surrogate */
        { S("plain ascii"), VF_CS_WINDOWS_1252, false }, /* only UTF-8 decoding is read as is */
        { S("a\0b\0"), VF_CS_UTF16LE, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t skip;
        cr_assert_eq(vf_utf8_as_is((const unsigned char *)cases[i].s, cases[i].n, cases[i].cs, &skip),
                     cases[i].as_is, "case %zu", i);
        check_as_is((const unsigned char *)cases[i].s, cases[i].n, cases[i].cs);
    }
    static const unsigned char alphabet[] = { 'a', '<', ' ', 0, 0x80, 0xBF, 0xC3, 0xA9, 0xE2, 0x82,
                                              0xAC, 0xF0, 0x9F, 0xED, 0xEF, 0xBB, 0xFF, 0xC0 };
    unsigned seed = 12345;
    unsigned char buf[24];
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(rand_r(&seed) % (int)sizeof buf);
        for (size_t k = 0; k < n; k++)
            buf[k] = alphabet[rand_r(&seed) % (int)sizeof alphabet];
        if (n >= 3 && rand_r(&seed) % 4 == 0)
            memcpy(buf, "\xEF\xBB\xBF", 3);
        check_as_is(buf, n, round % 2 ? VF_CS_UTF8 : VF_CS_UNKNOWN);
    }
}

Test(charset, latin1_labels_decode_as_windows_1252)
{
    cr_assert_eq(vf_charset_from_content_type("text/html; charset=ISO-8859-1"),
                 VF_CS_WINDOWS_1252);
    cr_assert_eq(vf_charset_from_content_type("text/html;charset=\"latin1\""),
                 VF_CS_WINDOWS_1252);
    cr_assert_eq(vf_charset_from_content_type("text/html; charset=Shift_JIS"), VF_CS_SHIFT_JIS);
    cr_assert_eq(vf_charset_from_content_type("text/html; charset=x-klingon"), VF_CS_UNKNOWN);
    cr_assert_eq(vf_charset_from_content_type("text/html; charset=iso-2022-kr"), VF_CS_UNKNOWN);
    cr_assert_eq(vf_charset_from_content_type("text/html"), VF_CS_UNKNOWN);
    char *s = decode("caf\xe9 \x93q\x94", 8, VF_CS_WINDOWS_1252);
    cr_assert_str_eq(s, "caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d");
    free(s);
}

Test(charset, detection_order)
{
    const unsigned char bom[] = "\xef\xbb\xbfhi";
    cr_assert_eq(vf_charset_detect(bom, 5, "text/html; charset=iso-8859-1", 1), VF_CS_UTF8);
    const unsigned char meta[] = "<meta charset='windows-1252'><p>\xe9";
    cr_assert_eq(vf_charset_detect(meta, sizeof meta - 1, "text/html", 1), VF_CS_WINDOWS_1252);
    cr_assert_eq(vf_charset_detect(meta, sizeof meta - 1, "text/html; charset=utf-8", 1),
                 VF_CS_UTF8);
    const unsigned char sjis[] = "<meta charset=shift_jis>\x93\xfa";
    cr_assert_eq(vf_charset_detect(sjis, sizeof sjis - 1, NULL, 1), VF_CS_SHIFT_JIS);
    const unsigned char kr[] = "<meta charset=euc-kr>\xc3\xa9";
    cr_assert_eq(vf_charset_detect(kr, sizeof kr - 1, NULL, 1), VF_CS_EUC_KR);
    /* An unknown label: the lenient detector sniffs, the strict one reports it. */
    const unsigned char odd[] = "<meta charset=x-klingon>\xc3\xa9";
    cr_assert_eq(vf_charset_detect(odd, sizeof odd - 1, NULL, 1), VF_CS_UTF8);
    char bad[48];
    cr_assert_eq(vf_charset_detect_strict(odd, sizeof odd - 1, NULL, 1, bad, sizeof bad),
                 VF_CS_UNKNOWN);
    cr_assert_str_eq(bad, "x-klingon");
    cr_assert_eq(vf_charset_detect_strict(odd, sizeof odd - 1, "text/html; charset=\"UTF-8\"", 1,
                                          bad, sizeof bad), VF_CS_UTF8);
    cr_assert_str_eq(bad, "");
    cr_assert_eq(vf_charset_detect_strict(kr, sizeof kr - 1, "text/html; charset=hz-gb-2312", 1,
                                          bad, sizeof bad), VF_CS_UNKNOWN);
    cr_assert_str_eq(bad, "hz-gb-2312", "replacement labels are never decoded");
}

/* XHTML and XML name their encoding in the XML declaration; WHATWG order:
 * BOM, then the Content-Type label, then the document's own declaration. */
Test(charset, xml_declaration_is_honoured_after_bom_and_header)
{
    const unsigned char x[] = "<?xml version=\"1.0\" encoding='windows-1251'?>\n"
                              "<html xmlns=\"http://www.w3.org/1999/xhtml\"><p>\xcf\xf0</p></html>";
    cr_assert_eq(vf_charset_detect(x, sizeof x - 1, "application/xhtml+xml", 1), VF_CS_WINDOWS_1251);
    cr_assert_eq(vf_charset_detect(x, sizeof x - 1, "application/xml", 0), VF_CS_WINDOWS_1251);
    cr_assert_eq(vf_charset_detect(x, sizeof x - 1, "text/html; charset=koi8-r", 1), VF_CS_KOI8_R);
    unsigned char bom[sizeof x + 3] = "\xef\xbb\xbf";
    memcpy(bom + 3, x, sizeof x);
    cr_assert_eq(vf_charset_detect(bom, sizeof bom - 1, NULL, 1), VF_CS_UTF8);
    /* The declaration wins over a later <meta>; one not at the start is no declaration. */
    const unsigned char both[] = "<?xml version=\"1.0\" encoding=\"EUC-JP\"?><meta charset=utf-8>";
    cr_assert_eq(vf_charset_detect(both, sizeof both - 1, NULL, 1), VF_CS_EUC_JP);
    const unsigned char late[] = " <?xml version=\"1.0\" encoding=\"EUC-JP\"?><p>\xc3\xa9";
    cr_assert_eq(vf_charset_detect(late, sizeof late - 1, NULL, 1), VF_CS_UTF8);
    char bad[48];
    const unsigned char odd[] = "<?xml version=\"1.0\" encoding=\"x-klingon\"?><p>x</p>";
    cr_assert_eq(vf_charset_detect_strict(odd, sizeof odd - 1, NULL, 1, bad, sizeof bad),
                 VF_CS_UNKNOWN);
    cr_assert_str_eq(bad, "x-klingon");
}

Test(charset, invalid_utf8_nul_and_utf16)
{
    const char bad[] = "a\xc0\xafz\xed\xa0\x80" "b\0c";
    char *s = decode(bad, sizeof bad - 1, VF_CS_UTF8);
    /* overlong, surrogate: one U+FFFD per bad byte; NUL dropped. */
    cr_assert_str_eq(s, "a\xef\xbf\xbd\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "bc");
    free(s);
    const char le[] = "\xff\xfeh\0\xe9\0=\xd8\x00\xde"; /* BOM, h, é, U+1F600 */
    s = decode(le, sizeof le - 1, vf_charset_detect((const unsigned char *)le, sizeof le - 1,
                                                    NULL, 0));
    cr_assert_str_eq(s, "h\xc3\xa9\xf0\x9f\x98\x80");
    free(s);
}

/* Decoding copies valid runs whole; the cap must still fall on a character. */
Test(charset, output_cap_cuts_runs_on_a_character_boundary)
{
    const char in[] = "ab\xc3\xa9" "cd\xe2\x82\xac" "e"; /* a b é c d € e: 10 bytes of UTF-8 */
    size_t len;
    for (size_t cap = 0; cap <= 11; cap++) {
        char *out = vf_to_utf8((const unsigned char *)in, sizeof in - 1, VF_CS_UTF8, cap, &len);
        cr_assert_not_null(out);
        cr_assert_leq(len, cap);
        static const size_t keep[] = { 0, 1, 2, 2, 4, 5, 6, 6, 6, 9, 10, 10 };
        cr_assert_eq(len, keep[cap], "cap %zu kept %zu bytes", cap, len);
        cr_assert_eq(memcmp(out, in, len), 0);
        free(out);
    }
    /* windows-1252: ASCII runs and a two-byte é, same rule. */
    char *out = vf_to_utf8((const unsigned char *)"abc\xe9z", 5, VF_CS_WINDOWS_1252, 4, &len);
    cr_assert_str_eq(out, "abc");
    free(out);
    out = vf_to_utf8((const unsigned char *)"abc\xe9z", 5, VF_CS_WINDOWS_1252, 5, &len);
    cr_assert_str_eq(out, "abc\xc3\xa9");
    free(out);
}

Test(charset, runs_around_nul_and_invalid_bytes)
{
    const char in[] = "one\0two\xfftwo\xc3\xa9\0\0end";
    char *s = decode(in, sizeof in - 1, VF_CS_UTF8);
    cr_assert_str_eq(s, "onetwo\xef\xbf\xbdtwo\xc3\xa9" "end");
    free(s);
    const char w[] = "x\0y\x80z";
    s = decode(w, sizeof w - 1, VF_CS_WINDOWS_1252);
    cr_assert_str_eq(s, "xy\xe2\x82\xacz");
    free(s);
    s = decode("", 0, VF_CS_UTF8);
    cr_assert_str_eq(s, "");
    free(s);
}

/* ---- dispatch --------------------------------------------------------- */

Test(extract, kinds_by_media_type)
{
    cr_assert_eq(vf_body_kind_of("text/html; charset=utf-8"), VF_KIND_HTML);
    cr_assert_eq(vf_body_kind_of("Application/XHTML+XML"), VF_KIND_HTML);
    cr_assert_eq(vf_body_kind_of("text/plain"), VF_KIND_TEXT);
    cr_assert_eq(vf_body_kind_of("application/ld+json"), VF_KIND_TEXT);
    cr_assert_eq(vf_body_kind_of("application/atom+xml"), VF_KIND_TEXT);
    cr_assert_eq(vf_body_kind_of("image/png"), VF_KIND_OTHER);
    cr_assert_eq(vf_body_kind_of("application/octet-stream"), VF_KIND_OTHER);
    cr_assert_eq(vf_body_kind_of(NULL), VF_KIND_OTHER);
}

Test(extract, plain_text_passes_through_without_nul)
{
    vf_extracted ex;
    const char body[] = "line one\nline\0 two";
    cr_assert(vf_extract(VF_MODE_RAW, NULL, 200, "text/plain", body, sizeof body - 1, 100, &ex));
    cr_assert_str_eq(ex.text, "line one\nline two");
    cr_assert_not(ex.malformed);
    free(ex.text);
}

Test(extract, binary_type_gives_empty_text)
{
    vf_extracted ex;
    cr_assert(vf_extract(VF_MODE_RAW, NULL, 200, "image/gif", "GIF89a", 6, 100, &ex));
    cr_assert_eq(ex.text_len, 0);
    cr_assert_str_eq(ex.text, "");
    free(ex.text);
}

Test(extract, json_mode_non_2xx_is_not_judged_as_json)
{
    vf_extracted ex;
    const char *body = "<p>upstream error</p>";
    cr_assert(vf_extract(VF_MODE_JSON, "/x", 502, "text/html", body, strlen(body), 100, &ex));
    cr_assert_not(ex.malformed);
    cr_assert_str_eq(ex.text, "upstream error");
    free(ex.text);
}
