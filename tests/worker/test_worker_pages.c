/* What the production worker, under its real seccomp filter, makes of whole
 * pages served from a loopback origin: main content among page furniture,
 * hidden text, documentation without <article>, every listed charset with
 * header-only, meta-only and BOM-only labels, entities, code, tables, lists,
 * glued inline boxes. The pages are written for these tests. */
#include <criterion/criterion.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

#define PARA(x) "<p>" x " It carries enough ordinary words, commas, clauses and length " \
                "to read like the body of an article, which is what a reader came for.</p>"

static const char news_page[] =
    "<html lang=\"en\"><head><title>Harbour bridge reopens</title>"
    "<meta name=\"description\" content=\"The bridge is open again.\">"
    "<meta property=\"article:published_time\" content=\"2024-06-01T08:30:00Z\">"
    "<link rel=\"canonical\" href=\"/news/bridge\"></head><body>"
    "<header><a href=\"/\">NAVTOKEN Home</a><a href=\"/news\">News</a></header>"
    "<nav><ul><li><a href=\"/a\">NAVTOKEN Sport</a></li><li><a href=\"/b\">Weather</a></li></ul></nav>"
    "<div id=\"cookie-consent\">CONSENTTOKEN We use cookies. <button>Accept</button></div>"
    "<div class=\"layout\"><aside class=\"ads\">ADTOKEN Buy now, limited offer</aside>"
    "<article><h1>Harbour bridge reopens</h1>"
    PARA("ARTICLEONE The harbour bridge reopened on Saturday after two years of repairs.")
    PARA("ARTICLETWO Engineers replaced the cables, the deck and the lighting.")
    PARA("ARTICLETHREE Traffic is expected to return to normal within a week.")
    "</article>"
    "<div class=\"related-links\"><a href=\"/x\">RELATEDTOKEN other story one</a> "
    "<a href=\"/y\">other story two</a> <a href=\"/z\">other story three</a></div></div>"
    "<footer>FOOTERTOKEN Copyright and contact</footer></body></html>";

Test(worker_pages, article_is_picked_from_nav_ads_and_consent)
{
    worker_run r;
    const char *t = html_text_of(news_page, VF_RENDER_TEXT, &r);
    cr_assert(strstr(t, "ARTICLEONE") && strstr(t, "ARTICLETWO") && strstr(t, "ARTICLETHREE"), "%s", t);
    static const char *const noise[] = { "NAVTOKEN", "CONSENTTOKEN", "ADTOKEN", "RELATEDTOKEN",
                                         "FOOTERTOKEN", "Accept" };
    for (size_t i = 0; i < sizeof noise / sizeof noise[0]; i++)
        cr_assert_null(strstr(t, noise[i]), "%s leaked: %s", noise[i], t);
    const vf_page_meta *m = r.res.meta;
    cr_assert_not_null(m);
    cr_assert_str_eq(m->extract, "main");
    cr_assert_str_eq(m->title, "Harbour bridge reopens");
    cr_assert_str_eq(m->h1, "Harbour bridge reopens");
    cr_assert_str_eq(m->lang, "en");
    cr_assert_str_eq(m->description, "The bridge is open again.");
    cr_assert_str_eq(m->published, "2024-06-01T08:30:00Z");
    cr_assert(strstr(m->canonical_url, "/news/bridge") && strncmp(m->canonical_url, "http://", 7) == 0,
              "%s", m->canonical_url);
    cr_assert_str_eq(m->charset, "utf-8");
    cr_assert_gt(m->page_chars, 0);
    cr_assert_leq(m->main_chars, m->page_chars);
    worker_run_free(&r);

    /* extract=page keeps the related links but still no chrome or consent. */
    t = html_text_of(news_page, VF_RENDER_TEXT | VF_RENDER_PAGE, &r);
    cr_assert(strstr(t, "ARTICLEONE") && strstr(t, "RELATEDTOKEN"), "%s", t);
    cr_assert_null(strstr(t, "NAVTOKEN"), "%s", t);
    cr_assert_null(strstr(t, "CONSENTTOKEN"), "%s", t);
    cr_assert_str_eq(r.res.meta->extract, "page");
    worker_run_free(&r);
}

Test(worker_pages, hidden_text_never_reaches_the_model)
{
    static const char page[] =
        "<html><body><main>"
        PARA("VISIBLEONE A visible paragraph.")
        "<p hidden>HIDDENATTR</p><div style=\"color:red; DISPLAY : none\">HIDDENSTYLE</div>"
        "<span style=\"visibility:hidden\">HIDDENVIS</span><div aria-hidden=\"true\">HIDDENARIA</div>"
        "<svg><text>HIDDENSVG</text><title>HIDDENSVGTITLE</title></svg>"
        "<iframe src=\"/x\">HIDDENIFRAME</iframe><template><p>HIDDENTEMPLATE</p></template>"
        "<noscript>HIDDENNOSCRIPT</noscript><script>var HIDDENSCRIPT=1</script>"
        "<style>.HIDDENSTYLESHEET{}</style><div role=\"dialog\">HIDDENDIALOG</div>"
        "<dialog>HIDDENDIALOGEL</dialog><select><option>HIDDENOPTION</option></select>"
        "<!-- HIDDENCOMMENT -->"
        PARA("VISIBLETWO Another visible paragraph.")
        "</main></body></html>";
    static const char *const hidden[] = {
        "HIDDENATTR", "HIDDENSTYLE", "HIDDENVIS", "HIDDENARIA", "HIDDENSVG", "HIDDENIFRAME",
        "HIDDENTEMPLATE", "HIDDENNOSCRIPT", "HIDDENSCRIPT", "HIDDENSTYLESHEET", "HIDDENDIALOG",
        "HIDDENOPTION", "HIDDENCOMMENT",
    };
    static const uint32_t modes[] = { 0, VF_RENDER_TEXT, VF_RENDER_PAGE, VF_RENDER_TEXT | VF_RENDER_PAGE };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        worker_run r;
        const char *t = html_text_of(page, modes[m], &r);
        cr_assert(strstr(t, "VISIBLEONE") && strstr(t, "VISIBLETWO"), "%s", t);
        for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
            cr_assert_null(strstr(t, hidden[i]), "mode %u: %s leaked: %s", modes[m], hidden[i], t);
        worker_run_free(&r);
    }
}

Test(worker_pages, docs_page_without_article_keeps_its_content)
{
    static const char page[] =
        "<html><body><div class=\"sidebar\"><ul>"
        "<li><a href=\"/1\">Install</a></li><li><a href=\"/2\">Configure</a></li>"
        "<li><a href=\"/3\">Reference</a></li></ul></div>"
        "<div class=\"body\"><h1>Configuration</h1><p>Set DOCSONE in the file.</p>"
        "<h2>Options</h2><dl><dt>DOCSTWO</dt><dd>How long to wait.</dd></dl>"
        "<pre>timeout = 5\nretries = 2</pre><h2>Limits</h2><ul><li>DOCSTHREE</li>"
        "<li>DOCSFOUR</li></ul><p>See <a href=\"/ref\">the reference</a>.</p></div>"
        "</body></html>";
    worker_run r;
    const char *t = html_text_of(page, 0, &r);
    cr_assert(strstr(t, "# Configuration"), "%s", t);
    cr_assert(strstr(t, "## Options"), "%s", t);
    static const char *const want[] = { "DOCSONE", "DOCSTWO", "DOCSTHREE", "DOCSFOUR",
                                        "timeout = 5\nretries = 2",
                                        "[the reference](http://origin.test:" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(t, want[i]), "lost %s: %s", want[i], t);
    worker_run_free(&r);
}

Test(worker_pages, markdown_structure)
{
    static const char page[] =
        "<html><body><article><h2>Code</h2>"
        "<pre><code class=\"language-python\">def f(x):\n    if x:\n        return 1\n"
        "    return 0\n</code></pre>"
        "<table><tr><th>Name</th><th>Qty</th></tr><tr><td>Apple</td><td>3</td></tr>"
        "<tr><td>Pear | big</td><td>5</td></tr></table>"
        "<ul><li>one<ul><li>nested a</li><li>nested b</li></ul></li><li>two</li></ul>"
        "<ol start=\"3\"><li>three</li><li>four</li></ol>"
        "<blockquote><p>Quoted line.</p></blockquote>"
        "<p>Line one<br>line two &amp; <a href=\"../up/x?a=1\">a link</a> "
        "<img src=\"/i.png\" alt=\"A picture\"> and <code>inline()</code>.</p>"
        "</article></body></html>";
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_PAGE, &r);
    static const char *const want[] = {
        "## Code",
        "```python\ndef f(x):\n    if x:\n        return 1\n    return 0\n```",
        "| Name | Qty |\n| --- | --- |\n| Apple | 3 |\n| Pear \\| big | 5 |",
        "- one\n  - nested a\n  - nested b\n- two",
        "3. three\n4. four",
        "> Quoted line.",
        "Line one\\\nline two & [a link](http://origin.test:",
        "/up/x?a=1)",
        "![A picture](http://origin.test:",
        "`inline()`",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(t, want[i]), "missing %s in:\n%s", want[i], t);
    worker_run_free(&r);

    /* Text: same structure, no markup; pre keeps its indentation. */
    t = html_text_of(page, VF_RENDER_PAGE | VF_RENDER_TEXT, &r);
    cr_assert(strstr(t, "def f(x):\n    if x:\n        return 1\n    return 0"), "%s", t);
    cr_assert(strstr(t, "Apple\t3"), "%s", t);
    cr_assert(strstr(t, "\xe2\x80\xa2 one\n  \xe2\x80\xa2 nested a"), "%s", t);
    cr_assert_null(strstr(t, "```"), "%s", t);
    cr_assert_null(strstr(t, "]("), "%s", t);
    cr_assert_null(strstr(t, "#"), "%s", t);
    worker_run_free(&r);

    /* Links as a numbered list; links none keeps only their text. */
    t = html_text_of(page, VF_RENDER_PAGE | VF_RENDER_LINKS_LIST, &r);
    cr_assert(strstr(t, "[a link][1]"), "%s", t);
    cr_assert(strstr(t, "\n[1]: http://origin.test:"), "%s", t);
    worker_run_free(&r);
    t = html_text_of(page, VF_RENDER_PAGE | VF_RENDER_LINKS_NONE, &r);
    cr_assert(strstr(t, "line two & a link"), "%s", t);
    cr_assert_null(strstr(t, "http"), "%s", t);
    worker_run_free(&r);
}

Test(worker_pages, glued_inline_boxes_are_separated_and_words_are_not_split)
{
    static const char page[] =
        "<html><body><div><a href=\"/h\">Home</a><a href=\"/n\">News</a><a href=\"/s\">Sport</a></div>"
        "<div><span class=\"n\">To 250,000</span><span>The state</span></div>"
        "<p>un<b>bold</b>ed and <em>it</em>alic stay whole</p></body></html>";
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_PAGE | VF_RENDER_TEXT, &r);
    cr_assert(strstr(t, "Home News Sport"), "%s", t);
    cr_assert(strstr(t, "To 250,000 The state"), "%s", t);
    cr_assert(strstr(t, "unbolded and italic stay whole"), "%s", t);
    worker_run_free(&r);
}

Test(worker_pages, entities_and_invisible_characters)
{
    static const char page[] =
        "<html><body><p>a &amp; b &lt;c&gt; &eacute; &hearts; &bigstar; &NotEqualTilde; "
        "&LT;tag&GT; &#150;&#128;&#x9F; soft&shy;hy&#173;phen zero&#8203;width "
        "join&#x200D;er &#xFEFF;bom &#x202E;bidi&#x202C; &#x2066;iso&#x2069;</p></body></html>";
    worker_run r;
    const char *t = html_text_of(page, VF_RENDER_PAGE | VF_RENDER_TEXT, &r);
    cr_assert_str_eq(t, "a & b <c> \xc3\xa9 \xe2\x99\xa5 \xe2\x98\x85 \xe2\x89\x82\xcc\xb8 "
                        "<tag> \xe2\x80\x93\xe2\x82\xac\xc5\xb8 softhyphen zerowidth "
                        "joiner bom bidi iso");
    worker_run_free(&r);
}

/* ---- charsets ---------------------------------------------------------- */

static char *encode(const char *to, const char *utf8, size_t *out_len)
{
    iconv_t cd = iconv_open(to, "UTF-8");
    cr_assert(cd != (iconv_t)-1, "iconv has no %s", to);
    size_t in_left = strlen(utf8), cap = in_left * 4 + 16, out_left = cap;
    char *out = malloc(cap), *in = (char *)utf8, *o = out;
    cr_assert(iconv(cd, &in, &in_left, &o, &out_left) != (size_t)-1, "encode to %s", to);
    iconv_close(cd);
    *out_len = cap - out_left;
    return out;
}

typedef struct {
    const char *label;   /* as served */
    const char *iconv;   /* to build the bytes */
    const char *sample;  /* UTF-8 text that must come back */
    const char *name;    /* WHATWG name the worker reports */
} charset_case;

static const charset_case charsets[] = {
    { "Shift_JIS", "SHIFT_JIS", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe6\x96\x87\xe7\xab\xa0\xe3\x81\xa7\xe3\x81\x99", "shift_jis" },
    { "EUC-JP", "EUC-JP", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe6\x96\x87\xe7\xab\xa0\xe3\x81\xa7\xe3\x81\x99", "euc-jp" },
    { "EUC-KR", "EUC-KR", "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 \xeb\xac\xb8\xec\x9e\xa5\xec\x9e\x85\xeb\x8b\x88\xeb\x8b\xa4", "euc-kr" },
    { "GB18030", "GB18030", "\xe4\xb8\xad\xe6\x96\x87\xe7\x9a\x84\xe6\x96\x87\xe7\xab\xa0 \xf0\x9f\x98\x80", "gb18030" },
    { "windows-1251", "CP1251", "\xd0\xa0\xd1\x83\xd1\x81\xd1\x81\xd0\xba\xd0\xb8\xd0\xb9 \xd1\x82\xd0\xb5\xd0\xba\xd1\x81\xd1\x82 \xe2\x80\x94 \xd1\x91\xd0\xbb\xd0\xba\xd0\xb0", "windows-1251" },
    { "KOI8-R", "KOI8-R", "\xd0\xa0\xd1\x83\xd1\x81\xd1\x81\xd0\xba\xd0\xb8\xd0\xb9 \xd1\x82\xd0\xb5\xd0\xba\xd1\x81\xd1\x82 \xd1\x91\xd0\xbb\xd0\xba\xd0\xb0", "koi8-r" },
    { "windows-1250", "CP1250", "\xc5\xbdlu\xc5\xa5ou\xc4\x8dk\xc3\xbd k\xc5\xaf\xc5\x88 \xe2\x80\x9eZa\xc5\xbc\xc3\xb3\xc5\x82\xc4\x87\xe2\x80\x9d", "windows-1250" },
    { "ISO-8859-2", "ISO-8859-2", "\xc5\xbdlu\xc5\xa5ou\xc4\x8dk\xc3\xbd k\xc5\xaf\xc5\x88 Za\xc5\xbc\xc3\xb3\xc5\x82\xc4\x87", "iso-8859-2" },
};

static void expect_decoded(const charset_case *c, bool header, bool meta)
{
    char html[512];
    snprintf(html, sizeof html, "<html><head>%s%s%s</head><body><p>MARK %s END</p></body></html>",
             meta ? "<meta charset=\"" : "", meta ? c->label : "", meta ? "\">" : "", c->sample);
    size_t len;
    char *body = encode(c->iconv, html, &len);
    char ctype[96];
    snprintf(ctype, sizeof ctype, "Content-Type: text/html%s%s", header ? "; charset=" : "",
             header ? c->label : "");
    worker_run r;
    fetch_page(ctype, body, len, VF_RENDER_TEXT, &r);
    char want[256];
    snprintf(want, sizeof want, "MARK %s END", c->sample);
    cr_assert(strstr((char *)r.res.text, want), "%s (%s): got '%s'", c->label,
              header ? "header" : "meta", (char *)r.res.text);
    cr_assert_not_null(r.res.meta);
    cr_assert_str_eq(r.res.meta->charset, c->name);
    worker_run_free(&r);
    free(body);
}

Test(worker_pages, legacy_charsets_by_header_only)
{
    for (size_t i = 0; i < sizeof charsets / sizeof charsets[0]; i++)
        expect_decoded(&charsets[i], true, false);
}

Test(worker_pages, legacy_charsets_by_meta_only)
{
    for (size_t i = 0; i < sizeof charsets / sizeof charsets[0]; i++)
        expect_decoded(&charsets[i], false, true);
}

/* None of the legacy charsets above has a byte order mark; UTF-8 and UTF-16 do. */
Test(worker_pages, bom_only_pages)
{
    const char *sample = "BOM \xd0\xa0\xd1\x83\xd1\x81 \xe6\x97\xa5\xe6\x9c\xac END";
    char html[256];
    snprintf(html, sizeof html, "<html><body><p>%s</p></body></html>", sample);
    static const struct { const char *iconv, *bom, *name; size_t bom_len; } boms[] = {
        { "UTF-8", "\xef\xbb\xbf", "utf-8", 3 },
        { "UTF-16LE", "\xff\xfe", "utf-16le", 2 },
        { "UTF-16BE", "\xfe\xff", "utf-16be", 2 },
    };
    for (size_t i = 0; i < sizeof boms / sizeof boms[0]; i++) {
        size_t len;
        char *enc = encode(boms[i].iconv, html, &len);
        char *body = malloc(len + boms[i].bom_len);
        memcpy(body, boms[i].bom, boms[i].bom_len);
        memcpy(body + boms[i].bom_len, enc, len);
        worker_run r;
        /* A wrong header label loses to the BOM. */
        fetch_page("Content-Type: text/html; charset=iso-8859-1", body, len + boms[i].bom_len,
                   VF_RENDER_TEXT, &r);
        cr_assert(strstr((char *)r.res.text, sample), "%s: '%s'", boms[i].name, (char *)r.res.text);
        cr_assert_str_eq(r.res.meta->charset, boms[i].name);
        worker_run_free(&r);
        free(enc);
        free(body);
    }
}

Test(worker_pages, undecodable_label_is_reported_not_guessed)
{
    static const char body[] = "<html><body><p>some text</p></body></html>";
    static const char *const headers[] = {
        "Content-Type: text/html; charset=x-klingon",
        "Content-Type: text/html; charset=iso-2022-kr", /* WHATWG "replacement" */
    };
    for (size_t i = 0; i < 2; i++) {
        worker_run r;
        fetch_page(headers[i], body, strlen(body), 0, &r);
        cr_assert_eq(r.res.text_len, 0);
        cr_assert(strncmp(r.res.detail, "unsupported charset '", 21) == 0, "%s", r.res.detail);
        cr_assert_not_null(r.res.meta);
        cr_assert(vf_page_meta_has_signal(r.res.meta, VF_SIGNAL_UNSUPPORTED_CHARSET));
        worker_run_free(&r);
    }
}
