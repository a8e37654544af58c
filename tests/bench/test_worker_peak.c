/* The worker's peak memory for one HTML page stays a bounded multiple of the
 * page (issues 11 and 15): the real worker, under its real confinement,
 * fetches an 8 MiB page and a 1 KiB page of dense paragraphs from a loopback
 * origin; verifetch-bench-worker-rss launches it the way the broker's direct
 * provider does and reaps it with wait4(), whose ru_maxrss is its peak RSS.
 * What the page costs is the difference: the libraries and the exec are in
 * both. Memory does not depend on machine load; the timeouts are generous. */
#include <criterion/criterion.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/worker/harness.h"

extern char **environ;

#define BIG_PAGE (8u << 20)
#define SMALL_PAGE 1024u
/* Peak RSS growth per page byte on dense prose: 9.8 before this test (the
 * body, two copies inside libxml2, nodes nobody reads and the scorer's stats
 * alive together), 5.8 with them gone, 2.73 with libxml2's 120-byte node per
 * element and per text run replaced by dom_tree.c's 32-byte one and one text
 * arena, 2.65 with the page streamed into the parse. Then the peak was the
 * end: the freed tree still resident on the heap beside the text and the
 * result message. A large page's tree now lives in mappings that go back
 * when freed, its text as the renderer passes it: 2.2, the peak being the
 * main-content pick (the tree beside the scorer's per-element stats). */
#define MAX_DENSE_MULTIPLE 2.3
/* On markup as sites write it (class soup, links, images, scripts) libxml2's
 * attributes (an xmlAttr and a text node each) were most of the tree: ~12
 * with them, 5.1 with attributes kept in attr_store, 2.41 in dom_tree.c's
 * nodes with the attribute run after each element, 2.0 since: the body
 * beside its UTF-8 copy, before the parse. */
#define MAX_MARKUP_MULTIPLE 2.1

/* While the result goes out the worker holds the text once: it is sent
 * from where the renderer left it, after the message's head (writev), not
 * copied into the message (2.0 x the text with the copy). */
#define MAX_SENDING_MULTIPLE 1.3

static const char *const words[] = { "river", "stone", "garden", "window", "letter", "morning",
                                     "harbour", "lantern", "orchard", "meadow", "kettle", "pencil" };
static const char tail[] = "</body></html>\n";

/* A len-byte page: head, then piece(n) for n = 0, 1, ... (the last one cut),
 * then the closing tags. */
static char *build_page(size_t len, const char *head, int (*piece)(char *, size_t, unsigned))
{
    char *b = malloc(len + 1);
    cr_assert_not_null(b);
    size_t pos = strlen(head);
    memcpy(b, head, pos);
    for (unsigned n = 0; pos + sizeof tail - 1 < len; n++) {
        char one[1400];
        int w = piece(one, sizeof one, n);
        size_t room = len - (sizeof tail - 1) - pos;
        size_t take = (size_t)w < room ? (size_t)w : room;
        memcpy(b + pos, one, take);
        pos += take;
    }
    memcpy(b + len - (sizeof tail - 1), tail, sizeof tail - 1);
    b[len] = '\0';
    return b;
}

/* The benchmark origin's paragraphs: about 75 bytes of markup and text each,
 * as dense a tree as ordinary prose gets. */
static int paragraph(char *out, size_t cap, unsigned n)
{
    return snprintf(out, cap, "<p>Paragraph %u: the %s by the %s holds a %s and a %s.</p>\n", n, words[n % 12],
                    words[(n * 7 + 3) % 12], words[(n * 5 + 1) % 12], words[(n * 11 + 2) % 12]);
}

static char *dense_page(size_t len)
{
    return build_page(len, "<!doctype html><html><head><title>peak</title></head><body>\n", paragraph);
}

/* A listing page as sites write one: cards of class soup, data attributes,
 * links and images around short text, an inline script every eighth card. */
static int story_card(char *out, size_t cap, unsigned n)
{
    const char *w1 = words[n % 12], *w2 = words[(n * 7 + 3) % 12], *w3 = words[(n * 5 + 1) % 12];
    return snprintf(out, cap,
                    "<div class=\"story-card col-md-4 col-sm-6 js-track is-%s\" id=\"card-%u\" data-id=\"%u\" "
                    "data-section=\"%s\"><a class=\"story-card__link\" href=\"/news/2026/12/03/%s-%s-%u\">"
                    "<img class=\"story-card__img lazy\" src=\"/img/%u/%s.jpg\" alt=\"The %s\" loading=\"lazy\" "
                    "width=\"320\" height=\"180\"></a><h3 class=\"story-card__title\"><a href=\"/news/%u\" "
                    "rel=\"bookmark\">Story %u: the %s by the %s</a></h3><p class=\"story-card__dek\">The %s "
                    "holds a %s.</p><span class=\"byline\">By <a class=\"author\" href=\"/authors/%s\">%s "
                    "%s</a></span></div>\n%s",
                    w1, n, n, w2, w1, w2, n, n, w3, w3, n, n, w1, w2, w3, w1, w2, w3, w1,
                    n % 8 ? "" : "<script>window.dataLayer=window.dataLayer||[];dataLayer.push({event:"
                                 "'impression',list:'home',position:8,variant:'b'});</script>\n");
}

static char *markup_page(size_t len)
{
    return build_page(len, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>peak</title>"
                           "</head><body class=\"home page-template\">\n", story_card);
}

/* What one fetch cost the worker. */
typedef struct {
    long maxrss_kib;   /* its peak RSS (ru_maxrss) */
    long sending_kib;  /* its anonymous RSS while it sends the result */
    size_t text_len;
} worker_cost;

/* One fetch of a body_len-byte page. At least min_text characters must come
 * back: the peak is that of real work. */
static worker_cost worker_peak(char *(*make_page)(size_t), size_t body_len, size_t min_text)
{
    char *body = make_page(body_len);
    size_t resp_len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html; charset=utf-8", body,
                               body_len, &resp_len);
    free(body);
    test_origin o = { .response = resp, .response_len = resp_len };
    origin_start(&o);

    char launcher[512], url[64], port[8], max_body[24];
    snprintf(launcher, sizeof launcher, "%s/tests/bench/verifetch-bench-worker-rss",
             getenv("VERIFETCH_BUILD_ROOT"));
    snprintf(url, sizeof url, "http://127.0.0.1:%u/page", o.port);
    snprintf(port, sizeof port, "%u", o.port);
    snprintf(max_body, sizeof max_body, "%u", 2 * BIG_PAGE);
    char *argv[] = { launcher, (char *)worker_path("verifetch-worker"), url, "127.0.0.1", port,
                     max_body, NULL };
    int out[2];
    cr_assert_eq(pipe(out), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, launcher, &fa, NULL, argv, environ), 0, "spawn %s", launcher);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    char line[1024];
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof line && (r = read(out[0], line + got, sizeof line - 1 - got)) > 0)
        got += (size_t)r;
    line[got] = '\0';
    close(out[0]);
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    origin_stop(&o);
    free(resp);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "launcher failed: %s", line);
    cr_assert(strstr(line, " status=200 ") && strstr(line, " terr=none "), "fetch failed: %s", line);
    worker_cost c = { -1, -1, 0 };
    cr_assert_eq(sscanf(line, "maxrss_kib=%ld", &c.maxrss_kib), 1, "%s", line);
    /* -1 when the worker was gone before the launcher looked (a small page). */
    const char *an = strstr(line, " anon_kib=");
    cr_assert(an && sscanf(an, " anon_kib=%ld", &c.sending_kib) == 1, "%s", line);
    const char *tl = strstr(line, " text_len=");
    cr_assert(tl && sscanf(tl, " text_len=%zu", &c.text_len) == 1);
    cr_assert_gt(c.text_len, min_text, "%s", line);
    return c;
}

#define SMALL_SAMPLES 3

static long median_of_three(long a, long b, long c)
{
    if ((a <= b && b <= c) || (c <= b && b <= a))
        return b;
    if ((b <= a && a <= c) || (c <= a && a <= b))
        return a;
    return c;
}

/* The peak an 8 MiB page adds over a 1 KiB one of the same kind, per byte,
 * must stay within bound; at least 1/min_text_per_byte_inv of it comes back
 * as text. */
static void check_peak(const char *kind, char *(*make_page)(size_t), size_t min_text_per_byte_inv, double bound)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer's shadow memory and quarantine are no worker's real peak");
#endif
    /* The fixed part is the median of three small pages: one worker's peak
     * can come out 1-2 MiB low (seen once in ten runs), which read as growth. */
    worker_cost smalls[SMALL_SAMPLES];
    for (int i = 0; i < SMALL_SAMPLES; i++) {
        smalls[i] = worker_peak(make_page, SMALL_PAGE, 0);
        /* A small result is sent at once: the launcher may find the worker gone. */
        for (int tries = 1; smalls[i].sending_kib < 0 && tries < 20; tries++)
            smalls[i] = worker_peak(make_page, SMALL_PAGE, 0);
        cr_assert_gt(smalls[i].sending_kib, 0, "no sample of a worker sending a small page");
    }
    worker_cost small = { median_of_three(smalls[0].maxrss_kib, smalls[1].maxrss_kib, smalls[2].maxrss_kib),
                          median_of_three(smalls[0].sending_kib, smalls[1].sending_kib, smalls[2].sending_kib),
                          0 };
    worker_cost big = worker_peak(make_page, BIG_PAGE, BIG_PAGE / min_text_per_byte_inv);
    cr_assert_gt(big.sending_kib, 0, "no sample of the worker sending 8 MiB");
    double multiple = (double)(big.maxrss_kib - small.maxrss_kib) * 1024.0 / BIG_PAGE;
    double sending = (double)(big.sending_kib - small.sending_kib) * 1024.0 / (double)big.text_len;
    cr_log_info("worker peak, %s: %ld KiB (1 KiB page) -> %ld KiB (8 MiB page): %.2f x the page; "
                "while sending: %.2f x the text", kind, small.maxrss_kib, big.maxrss_kib, multiple, sending);
    cr_assert_leq(multiple, bound, "8 MiB of %s: peak grew by %.2f x the page", kind, multiple);
    cr_assert_leq(sending, MAX_SENDING_MULTIPLE, "8 MiB of %s: %.2f x the text held while sending", kind, sending);
}

/* Dense prose: the page's text comes back whole. */
Test(worker_peak, eight_mib_page_costs_a_bounded_multiple_of_itself, .timeout = 120)
{
    check_peak("dense prose", dense_page, 2, MAX_DENSE_MULTIPLE);
}

Test(worker_peak, eight_mib_of_site_markup_costs_a_bounded_multiple_of_itself, .timeout = 120)
{
    check_peak("site markup", markup_page, 20, MAX_MARKUP_MULTIPLE);
}
