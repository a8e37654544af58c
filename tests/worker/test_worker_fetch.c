/* The production worker, under its real seccomp filter, against a loopback
 * origin: what comes back for pages, redirects, encodings, caps and TLS. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <zlib.h>
#ifdef HAVE_BROTLIENC
#include <brotli/encode.h>
#endif

#include "harness.h"

#define WAIT_MS 15000

static const char *worker(void)
{
    return worker_path("verifetch-worker");
}

static void expect_clean_exit(const worker_run *r)
{
    cr_assert(WIFEXITED(r->wstatus), "worker did not exit normally (signal %d)",
              WIFSIGNALED(r->wstatus) ? WTERMSIG(r->wstatus) : 0);
    cr_assert_eq(WEXITSTATUS(r->wstatus), 0);
    cr_assert_eq(r->recv_err, VF_IPC_OK, "no result frame: %s", vf_ipc_strerror(r->recv_err));
    cr_assert_eq(r->decode_err, VF_IPC_OK, "bad result: %s", vf_ipc_strerror(r->decode_err));
    cr_assert_not(r->extra_bytes, "more than one frame");
}

/* Serves response for one fetch of http://origin.test:PORT/ and runs job tweaks. */
static void fetch_once(const char *response, size_t len, vf_job *job, char *url,
                       size_t url_size, test_origin *o, worker_run *r)
{
    memset(o, 0, sizeof *o);
    o->response = response;
    o->response_len = len;
    origin_start(o);
    snprintf(url, url_size, "http://origin.test:%u/page", o->port);
    job->url = url;
    job->port = o->port;
    run_worker(worker(), job, origin_connect(o), WAIT_MS, r);
    origin_stop(o);
}

Test(worker_fetch, html_page_is_fetched_and_rendered)
{
    const char *body = "<html><head><title>Doc</title><script>steal()</script>"
                       "<style>p{color:red}</style></head><body><p>Hello &amp; welcome</p>"
                       "<div>second   line</div></body></html>";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html; charset=utf-8",
                               body, strlen(body), &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    char *hdrs[] = { "X-Verifetch-Test: yes" };
    job.headers = hdrs;
    job.n_headers = 1;
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "terr %s: %s", r.res.transport_error, r.res.detail);
    cr_assert_eq(r.res.http_status, 200);
    cr_assert_str_eq(r.res.content_type, "text/html; charset=utf-8");
    cr_assert_str_eq((char *)r.res.text, "Hello & welcome\n\nsecond line");
    cr_assert_not_null(r.res.meta);
    cr_assert_str_eq(r.res.meta->title, "Doc");
    cr_assert_str_eq(r.res.meta->charset, "utf-8");
    cr_assert_str_eq(r.res.meta->extract, "page"); /* too short to convince as an article */
    cr_assert_eq(r.res.body_bytes, strlen(body));
    /* What the origin saw: one HTTP/1.1 GET, our header, all decoders offered. */
    cr_assert_eq(o.accepted, 1);
    cr_assert(strncmp(o.request, "GET /page HTTP/1.1\r\n", 20) == 0, "%s", o.request);
    char host[64];
    snprintf(host, sizeof host, "Host: origin.test:%u\r\n", o.port);
    cr_assert(strstr(o.request, host), "%s", o.request);
    cr_assert(strstr(o.request, "X-Verifetch-Test: yes\r\n"));
    cr_assert(strstr(o.request, "gzip") && strstr(o.request, "br") && strstr(o.request, "zstd"),
              "Accept-Encoding lacks a decoder: %s", o.request);
    worker_run_free(&r);
    free(resp);
}

Test(worker_fetch, redirect_is_returned_not_followed)
{
    size_t len;
    char *resp = http_response("HTTP/1.1 302 Found",
                               "Location: /elsewhere?x=1\r\nContent-Type: text/html", "moved",
                               5, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error);
    cr_assert_eq(r.res.http_status, 302);
    cr_assert_str_eq(r.res.location, "/elsewhere?x=1");
    cr_assert_eq(o.accepted, 1);
    worker_run_free(&r);
    free(resp);
}

static unsigned char *gzip_bytes(const char *in, size_t n, size_t *out_len)
{
    z_stream z = { 0 };
    cr_assert_eq(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, n) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

Test(worker_fetch, gzip_body_is_decoded)
{
    const char *text = "compressed words compressed words compressed words";
    size_t zlen, len;
    unsigned char *z = gzip_bytes(text, strlen(text), &zlen);
    char *resp = http_response("HTTP/1.1 200 OK",
                               "Content-Type: text/plain\r\nContent-Encoding: gzip",
                               (char *)z, zlen, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s", r.res.detail);
    cr_assert_str_eq((char *)r.res.text, text);
    cr_assert_eq(r.res.body_bytes, strlen(text));
    worker_run_free(&r);
    free(resp);
    free(z);
}

static void expect_decoded(const char *encoding, const unsigned char *z, size_t zlen,
                           const char *text)
{
    char hdr[128];
    snprintf(hdr, sizeof hdr, "Content-Type: text/plain\r\nContent-Encoding: %s", encoding);
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", hdr, (const char *)z, zlen, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s: %s", encoding, r.res.detail);
    cr_assert_str_eq((char *)r.res.text, text);
    worker_run_free(&r);
    free(resp);
}

Test(worker_fetch, brotli_body_is_decoded)
{
#ifdef HAVE_BROTLIENC
    const char *text = "brotli words brotli words brotli words";
    size_t zlen = BrotliEncoderMaxCompressedSize(strlen(text));
    unsigned char *z = malloc(zlen);
    cr_assert(BrotliEncoderCompress(BROTLI_DEFAULT_QUALITY, BROTLI_DEFAULT_WINDOW,
                                    BROTLI_MODE_TEXT, strlen(text), (const uint8_t *)text,
                                    &zlen, z));
    expect_decoded("br", z, zlen, text);
    free(z);
#else
    cr_skip_test("libbrotlienc not available to make a brotli body");
#endif
}

Test(worker_fetch, zstd_body_is_decoded)
{
    if (system("command -v zstd >/dev/null 2>&1") != 0)
        cr_skip_test("zstd CLI not available to make a zstd body");
    const char *text = "zstd words zstd words zstd words";
    char dir[] = "/tmp/vf-worker-zstd-XXXXXX", cmd[256], path[128];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/in", dir);
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "zstd -q -c %s/in > %s/in.zst", dir, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/in.zst", dir);
    size_t zlen;
    uint8_t *z = slurp(path, &zlen);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    expect_decoded("zstd", z, zlen, text);
    free(z);
}

Test(worker_fetch, corrupt_gzip_is_a_decode_error)
{
    const unsigned char junk[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03 this is not deflate";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK",
                               "Content-Type: text/plain\r\nContent-Encoding: gzip",
                               (const char *)junk, sizeof junk - 1, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "decode", "%s: %s", r.res.transport_error,
                     r.res.detail);
    worker_run_free(&r);
    free(resp);
}

/* Megabytes of body exercise the allocator paths (mmap, mremap, munmap) that
 * small pages never reach, under the real filter. */
Test(worker_fetch, large_gzip_html_page)
{
    const char *para = "<p>paragraph of ordinary page text</p>\n";
    size_t plen = strlen(para), count = 100000;
    char *html = malloc(plen * count + 64);
    for (size_t i = 0; i < count; i++)
        memcpy(html + i * plen, para, plen);
    strcpy(html + plen * count, "<p>the very end</p>");
    size_t hlen = strlen(html), zlen, len;
    unsigned char *z = gzip_bytes(html, hlen, &zlen);
    char *resp = http_response("HTTP/1.1 200 OK",
                               "Content-Type: text/html\r\nContent-Encoding: gzip",
                               (char *)z, zlen, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.max_body = 8u << 20;
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s", r.res.detail);
    cr_assert_eq(r.res.body_bytes, hlen);
    const char *line = "paragraph of ordinary page text\n\n";
    cr_assert_eq(r.res.text_len, strlen(line) * count + strlen("the very end"));
    cr_assert_str_eq((char *)r.res.text + r.res.text_len - 12, "the very end");
    worker_run_free(&r);
    free(resp);
    free(z);
    free(html);
}

Test(worker_fetch, body_over_cap_is_too_large)
{
    size_t blen = 5000, len;
    char *body = malloc(blen);
    memset(body, 'a', blen);
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/plain", body, blen, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.max_body = 4096;
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "too_large");
    cr_assert(strstr(r.res.detail, "4096"), "%s", r.res.detail);
    cr_assert_eq(r.res.text_len, 0);
    worker_run_free(&r);
    free(resp);
    free(body);
}

Test(worker_fetch, body_at_cap_is_accepted)
{
    size_t blen = 4096, len;
    char *body = malloc(blen);
    memset(body, 'b', blen);
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/plain", body, blen, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.max_body = 4096;
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s", r.res.detail);
    cr_assert_eq(r.res.text_len, 4096);
    worker_run_free(&r);
    free(resp);
    free(body);
}

Test(worker_fetch, gzip_bomb_hits_the_decoded_cap)
{
    size_t plain = 8u << 20, zlen, len;
    char *zeros = calloc(1, plain);
    unsigned char *z = gzip_bytes(zeros, plain, &zlen);
    cr_assert_lt(zlen, 64u * 1024u, "the bomb should be small on the wire");
    char *resp = http_response("HTTP/1.1 200 OK",
                               "Content-Type: text/plain\r\nContent-Encoding: gzip",
                               (char *)z, zlen, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.max_body = 64u * 1024u;
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "too_large");
    worker_run_free(&r);
    free(resp);
    free(z);
    free(zeros);
}

Test(worker_fetch, oversized_headers_are_a_protocol_error)
{
    /* 80 headers of 1000 bytes: each within curl's own per-line limit, together
     * past the worker's 64 KiB total. */
    size_t cap = 90u * 1024u, used = 0;
    char *hdrs = malloc(cap);
    for (int i = 0; i < 80; i++) {
        used += (size_t)snprintf(hdrs + used, cap - used, "%sX-Filler-%02d: ", i ? "\r\n" : "", i);
        memset(hdrs + used, 'f', 1000);
        used += 1000;
        hdrs[used] = '\0';
    }
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", hdrs, "x", 1, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "protocol");
    cr_assert_str_eq(r.res.detail, "response headers too large");
    worker_run_free(&r);
    free(resp);
    free(hdrs);
}

Test(worker_fetch, latin1_page_is_decoded_under_the_filter)
{
    const char *body = "<p>caf\xe9 cr\xe8me \x80</p>";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html; charset=ISO-8859-1",
                               body, strlen(body), &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    /* ISO-8859-1 is read as windows-1252, as browsers do: 0x80 is the euro sign. */
    cr_assert_str_eq((char *)r.res.text, "caf\xc3\xa9 cr\xc3\xa8me \xe2\x82\xac");
    worker_run_free(&r);
    free(resp);
}

/* A charset nothing here decodes must not send libxml2 to iconv (gconv files
 * are out of reach after the filter: that would be SIGSYS). */
static void exotic_charset_case(const char *ctype, const char *body)
{
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", ctype, body, strlen(body), &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s", r.res.detail);
    cr_assert(strstr((char *)r.res.text, "ascii words survive"), "%s", (char *)r.res.text);
    worker_run_free(&r);
    free(resp);
}

Test(worker_fetch, meta_charset_shift_jis_is_survived)
{
    exotic_charset_case("Content-Type: text/html",
                        "<html><head><meta charset=\"shift_jis\"></head>"
                        "<body><p>\x93\xfa\x96\x7b ascii words survive</p></body></html>");
}

Test(worker_fetch, http_equiv_euc_jp_is_survived)
{
    exotic_charset_case("Content-Type: text/html",
                        "<html><head><meta http-equiv=\"Content-Type\" "
                        "content=\"text/html; charset=EUC-JP\"></head>"
                        "<body>\xc6\xfc\xcb\xdc ascii words survive</body></html>");
}

Test(worker_fetch, header_charset_koi8_is_survived)
{
    exotic_charset_case("Content-Type: text/html; charset=KOI8-R",
                        "<body>\xf0\xd2\xc9 ascii words survive</body>");
}

Test(worker_fetch, xhtml_xml_declaration_encoding_is_survived)
{
    exotic_charset_case("Content-Type: application/xhtml+xml",
                        "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>"
                        "<html xmlns=\"http://www.w3.org/1999/xhtml\"><body>"
                        "<p>\x93\xfa ascii words survive</p></body></html>");
}

Test(worker_fetch, non_text_type_gives_no_text)
{
    const char body[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: image/png", body,
                               sizeof body - 1, &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.content_type, "image/png");
    cr_assert_eq(r.res.text_len, 0);
    cr_assert_eq(r.res.body_bytes, sizeof body - 1);
    worker_run_free(&r);
    free(resp);
}

Test(worker_fetch, json_mode_follows_the_pointer_under_the_filter)
{
    const char *body = "{\"data\":{\"content\":\"page text \\u00e9\",\"n\":3}}";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: application/json", body,
                               strlen(body), &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.mode = VF_MODE_JSON;
    job.json_pointer = "/data/content";
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error);
    cr_assert_null(r.res.malformed);
    cr_assert_str_eq((char *)r.res.text, "page text \xc3\xa9");
    cr_assert_str_eq(r.res.content_type, "text/plain; charset=utf-8");
    worker_run_free(&r);
    free(resp);
}

Test(worker_fetch, json_mode_wrong_type_is_malformed)
{
    const char *body = "{\"data\":{\"content\":\"x\",\"n\":3}}";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: application/json", body,
                               strlen(body), &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.mode = VF_MODE_JSON;
    job.json_pointer = "/data/n";
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error);
    cr_assert_str_eq(r.res.malformed, "json pointer '/data/n' is a number, not a string");
    cr_assert_eq(r.res.text_len, 0);
    worker_run_free(&r);
    free(resp);
}

Test(worker_fetch, json_mode_html_body_is_not_json)
{
    const char *body = "<html>rate limited</html>";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html", body,
                               strlen(body), &len);
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.mode = VF_MODE_JSON;
    job.json_pointer = "/data/content";
    test_origin o;
    worker_run r;
    fetch_once(resp, len, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.malformed, "response is not JSON");
    worker_run_free(&r);
    free(resp);
}

Test(worker_fetch, silent_origin_times_out)
{
    char url[128];
    vf_job job = basic_job("http://x:1/");
    job.timeout_ms = 400;
    test_origin o;
    worker_run r;
    fetch_once(NULL, 0, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "timeout", "%s: %s", r.res.transport_error,
                     r.res.detail);
    worker_run_free(&r);
}

Test(worker_fetch, closed_without_answer_is_an_error)
{
    char url[128];
    vf_job job = basic_job("http://x:1/");
    test_origin o;
    worker_run r;
    fetch_once("", 0, &job, url, sizeof url, &o, &r);
    expect_clean_exit(&r);
    cr_assert_not_null(r.res.transport_error);
    cr_assert(strcmp(r.res.transport_error, "protocol") == 0 ||
              strcmp(r.res.transport_error, "connect") == 0, "%s", r.res.transport_error);
    cr_assert_eq(r.res.http_status, 0);
    worker_run_free(&r);
}

/* The keyed-provider channel: plain HTTP over a socketpair end, with the
 * placeholder address the broker uses. */
Test(worker_fetch, plain_http_over_a_socketpair)
{
    const char *body = "{\"data\":{\"content\":\"provider text\"}}";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: application/json", body,
                               strlen(body), &len);
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = resp;
    o.response_len = len;
    int worker_end = origin_start_pair(&o);
    char url[] = "http://api.fetcher.example/v1/fetch?url=http%3A%2F%2Fexample.com%2F";
    vf_job job = basic_job(url);
    job.port = 80;
    job.mode = VF_MODE_JSON;
    job.json_pointer = "/data/content";
    worker_run r;
    run_worker(worker(), &job, worker_end, WAIT_MS, &r);
    origin_stop(&o);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s", r.res.detail);
    cr_assert_str_eq((char *)r.res.text, "provider text");
    cr_assert(strncmp(o.request, "GET /v1/fetch?url=http%3A%2F%2Fexample.com%2F HTTP/1.1\r\n",
                      56) == 0, "%s", o.request);
    cr_assert(strstr(o.request, "Host: api.fetcher.example\r\n"), "%s", o.request);
    worker_run_free(&r);
    free(resp);
}

/* Fetches url over a socketpair with the given job address; returns the
 * request the far end saw (static). */
static const char *fetch_over_pair(char *url, const char *ip, uint16_t port)
{
    static test_origin o;
    const char *body = "pair ok";
    size_t len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/plain", body,
                               strlen(body), &len);
    memset(&o, 0, sizeof o);
    o.response = resp;
    o.response_len = len;
    int worker_end = origin_start_pair(&o);
    vf_job job = basic_job(url);
    job.port = port;
    job.connect_ip = (char *)ip;
    worker_run r;
    run_worker(worker(), &job, worker_end, WAIT_MS, &r);
    origin_stop(&o);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s: %s", url, r.res.detail);
    cr_assert_str_eq((char *)r.res.text, "pair ok");
    worker_run_free(&r);
    free(resp);
    return o.request;
}

Test(worker_fetch, ipv6_job_address_and_literal_host)
{
    char named[] = "http://v6.example:8080/a";
    const char *req = fetch_over_pair(named, "::1", 8080);
    cr_assert(strstr(req, "Host: v6.example:8080\r\n"), "%s", req);
    char literal[] = "http://[::1]:8080/b";
    req = fetch_over_pair(literal, "::1", 8080);
    cr_assert(strstr(req, "Host: [::1]:8080\r\n"), "%s", req);
    char v4[] = "http://127.0.0.1:8080/c";
    req = fetch_over_pair(v4, "127.0.0.1", 8080);
    cr_assert(strstr(req, "Host: 127.0.0.1:8080\r\n"), "%s", req);
}

/* libidn2 needs iconv and a UTF-8 locale: done before the filter. */
Test(worker_fetch, international_host_becomes_punycode)
{
    char url[] = "http://b\xc3\xbc" "cher.example/";
    const char *req = fetch_over_pair(url, "127.0.0.1", 80);
    cr_assert(strstr(req, "Host: xn--bcher-kva.example\r\n"), "%s", req);
}

Test(worker_fetch, job_ip_that_is_not_an_address_is_refused)
{
    test_origin o;
    memset(&o, 0, sizeof o);
    o.response = "";
    int worker_end = origin_start_pair(&o);
    char url[] = "http://name.example/";
    vf_job job = basic_job(url);
    job.port = 80;
    job.connect_ip = "name.example";
    worker_run r;
    run_worker(worker(), &job, worker_end, WAIT_MS, &r);
    origin_stop(&o);
    /* Never a DNS lookup (curl's resolver thread would die by SIGSYS). */
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "internal");
    cr_assert_str_eq(r.res.detail, "job ip is not an IP address");
    worker_run_free(&r);
}

Test(worker_fetch, job_without_socket_is_refused)
{
    char url[] = "http://origin.test:80/";
    vf_job job = basic_job(url);
    worker_run r;
    run_worker(worker(), &job, -1, WAIT_MS, &r);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "internal");
    cr_assert_str_eq(r.res.detail, "no socket passed with the job");
    worker_run_free(&r);
}

/* ---- HTTPS ------------------------------------------------------------ */

static void https_case(bool give_ca, worker_run *r, test_origin *o)
{
    test_pki pki;
    pki_create(&pki);
    const char *body = "<p>secure hello</p>";
    size_t len, ca_len;
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html", body,
                               strlen(body), &len);
    uint8_t *ca = slurp(pki.ca_pem, &ca_len);
    memset(o, 0, sizeof *o);
    o->response = resp;
    o->response_len = len;
    o->cert_file = pki.cert_pem;
    o->key_file = pki.key_pem;
    origin_start(o);
    char url[128];
    snprintf(url, sizeof url, "https://localhost:%u/", o->port);
    vf_job job = basic_job(url);
    if (give_ca) {
        job.ca_pem = ca;
        job.ca_pem_len = ca_len;
    }
    run_worker(worker(), &job, origin_connect(o), WAIT_MS, r);
    origin_stop(o);
    pki_destroy(&pki);
    free(ca);
    free(resp);
}

Test(worker_fetch, https_with_ca_blob_is_verified)
{
    worker_run r;
    test_origin o;
    https_case(true, &r, &o);
    expect_clean_exit(&r);
    cr_assert_null(r.res.transport_error, "%s: %s", r.res.transport_error, r.res.detail);
    cr_assert(o.tls_handshake_ok);
    cr_assert_eq(r.res.http_status, 200);
    cr_assert_str_eq((char *)r.res.text, "secure hello");
    worker_run_free(&r);
}

Test(worker_fetch, https_without_ca_fails_verification)
{
    worker_run r;
    test_origin o;
    https_case(false, &r, &o);
    expect_clean_exit(&r);
    cr_assert_str_eq(r.res.transport_error, "tls", "%s: %s", r.res.transport_error,
                     r.res.detail);
    cr_assert_not(o.tls_handshake_ok);
    cr_assert_eq(r.res.text_len, 0);
    worker_run_free(&r);
}
