#include "worker/fetch/fetch.h"
#include "worker/fetch/ca_store.h"
#include "worker/content/page_map.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int sock;
    bool sock_handed_out;
    bool sock_closed;
    size_t header_bytes;
    bool headers_too_large;
    bool body_too_large;
    uint64_t max_body;
    vf_fetch_result *out;
    CURL *curl;
} fetch_ctx;

static bool has_non_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return true;
    return false;
}

int vf_fetch_prepare(char **url, char *err, size_t errlen)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        return -1;
    }
    CURLU *u = curl_url();
    char *host = NULL, *converted = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, *url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        snprintf(err, errlen, "job URL does not parse");
        goto out;
    }
    if (!has_non_ascii(host)) {
        rc = 0;
        goto out;
    }
    /* libidn2 converts from the locale's charset; the worker runs in "C". */
    setlocale(LC_CTYPE, "C.UTF-8");
    CURLUcode uc = curl_url_get(u, CURLUPART_URL, &converted, CURLU_PUNYCODE);
    setlocale(LC_CTYPE, "C");
    if (uc != CURLUE_OK || !converted || has_non_ascii(converted)) {
        snprintf(err, errlen, "international host name cannot be converted to punycode");
        goto out;
    }
    char *copy = strdup(converted);
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    free(*url);
    *url = copy;
    rc = 0;
out:
    curl_free(host);
    curl_free(converted);
    curl_url_cleanup(u);
    return rc;
}

/* libcurl asks for a socket: hand over the broker's connected one, once. */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose,
                                 struct curl_sockaddr *address)
{
    (void)address;
    fetch_ctx *f = clientp;
    if (purpose != CURLSOCKTYPE_IPCXN || f->sock_handed_out)
        return CURL_SOCKET_BAD;
    f->sock_handed_out = true;
    return f->sock;
}

static int socket_is_connected(void *clientp, curl_socket_t fd, curlsocktype purpose)
{
    (void)clientp, (void)fd, (void)purpose;
    return CURL_SOCKOPT_ALREADY_CONNECTED;
}

static int close_socket(void *clientp, curl_socket_t fd)
{
    fetch_ctx *f = clientp;
    if (fd == f->sock)
        f->sock_closed = true;
    return close(fd);
}

static size_t on_header(char *data, size_t size, size_t nitems, void *userdata)
{
    (void)data;
    fetch_ctx *f = userdata;
    size_t n = size * nitems;
    if (n > VF_FETCH_MAX_HEADER_BYTES - f->header_bytes) {
        f->headers_too_large = true;
        return 0; /* aborts the transfer */
    }
    f->header_bytes += n;
    return n;
}

/* A large body goes into a mapping of huge pages (content/page_map.h):
 * sized at once from a Content-Length that says so, or moved there when it
 * grows past half the size that earns them (compressed or chunked bodies).
 * Staying on the heap, if the move fails, is only slower. */
static void place_large_body(fetch_ctx *f, vf_tbuf *b, size_t n)
{
    if (b->mapped)
        return;
    curl_off_t length = -1;
    if (b->len == 0 && f->curl &&
        curl_easy_getinfo(f->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
        length >= (curl_off_t)VF_PAGE_MAP_HUGE_MIN && (uint64_t)length <= f->max_body)
        (void)vf_tbuf_move_to_mapping(b, (size_t)length);
    else if (b->len + n >= VF_PAGE_MAP_HUGE_MIN / 2)
        (void)vf_tbuf_move_to_mapping(b, 2 * (b->len + n));
}

/* Receives decoded body bytes (after gzip/br/zstd); the cap applies here. */
static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    fetch_ctx *f = userdata;
    size_t n = size * nmemb;
    vf_tbuf *b = &f->out->body;
    if (n > f->max_body - b->len) {
        f->body_too_large = true;
        return 0;
    }
    place_large_body(f, b, n);
    if (!vf_tbuf_append(b, data, n))
        return 0; /* out of memory: reported as a write error */
    return n;
}

/* Short, printable copy of curl's message for the receipt detail. */
static void set_detail(vf_fetch_result *out, const char *msg)
{
    size_t k = 0;
    for (; msg[k] && k + 1 < sizeof out->detail; k++) {
        unsigned char c = (unsigned char)msg[k];
        out->detail[k] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    while (k > 0 && out->detail[k - 1] == ' ')
        k--;
    out->detail[k] = '\0';
}

static const char *map_curl_error(CURLcode code, bool got_response)
{
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
        return "timeout";
    case CURLE_BAD_CONTENT_ENCODING:
        return "decode";
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
        return got_response ? "protocol" : "connect";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_USE_SSL_FAILED:
        return "tls";
    case CURLE_OUT_OF_MEMORY:
        return "internal";
    default:
        return "protocol";
    }
}

/* "host:port:ip" so curl never starts its resolver thread. IP-literal hosts
 * need no entry (curl does not resolve them): *list stays NULL then. */
static bool resolve_entry(const vf_job *job, struct curl_slist **list, char *err,
                          size_t errlen)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    bool ok = false;
    *list = NULL;
    if (!u || curl_url_set(u, CURLUPART_URL, job->url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        snprintf(err, errlen, "job URL does not parse");
        goto out;
    }
    unsigned char probe[sizeof(struct in6_addr)];
    bool v6 = strchr(job->connect_ip, ':') != NULL;
    if (inet_pton(v6 ? AF_INET6 : AF_INET, job->connect_ip, probe) != 1) {
        /* A name here would send curl to its resolver thread. */
        snprintf(err, errlen, "job ip is not an IP address");
        goto out;
    }
    if (host[0] == '[' || inet_pton(AF_INET, host, probe) == 1) {
        ok = true;
        goto out;
    }
    size_t need = strlen(host) + strlen(port) + strlen(job->connect_ip) + 5;
    char *entry = malloc(need);
    if (!entry) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    snprintf(entry, need, v6 ? "%s:%s:[%s]" : "%s:%s:%s", host, port, job->connect_ip);
    *list = curl_slist_append(NULL, entry);
    free(entry);
    ok = *list != NULL;
    if (!ok)
        snprintf(err, errlen, "out of memory");
out:
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return ok;
}

static char *dup_capped(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    return strndup(s, n);
}

static void record_response(CURL *curl, vf_fetch_result *out)
{
    long status = 0;
    char *ctype = NULL;
    struct curl_header *h = NULL;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    out->status = (status >= 0 && status <= 999) ? (int)status : 0;
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK && ctype)
        out->content_type = dup_capped(ctype, VF_IPC_MAX_SHORT - 1);
    if (out->status >= 300 && out->status < 400 &&
        curl_easy_header(curl, "Location", 0, CURLH_HEADER, -1, &h) == CURLHE_OK)
        out->location = strdup(h->value);
    for (size_t i = 0; vf_wall_header_names[i]; i++)
        if (curl_easy_header(curl, vf_wall_header_names[i], 0, CURLH_HEADER, -1, &h) == CURLHE_OK)
            vf_wall_signals_from_header(&out->wall, vf_wall_header_names[i], h->value);
    /* Several Cache-Control lines are one list (RFC 9110 5.3); the broker's
     * cache needs only a few directives, so the last line is enough. */
    size_t n_cc = 0;
    if (curl_easy_header(curl, "Cache-Control", 0, CURLH_HEADER, -1, &h) == CURLHE_OK) {
        n_cc = h->amount;
        if (n_cc > 0 && curl_easy_header(curl, "Cache-Control", n_cc - 1, CURLH_HEADER, -1, &h) == CURLHE_OK)
            out->cache_control = dup_capped(h->value, VF_IPC_MAX_SHORT - 1);
    }
}

void vf_fetch(const vf_job *job, int sock, X509_STORE *ca_store, vf_fetch_result *out)
{
    memset(out, 0, sizeof *out);
    vf_tbuf_init(&out->body, (size_t)job->max_body);
    fetch_ctx f = { .sock = sock, .max_body = job->max_body, .out = out };
    struct curl_slist *resolve = NULL, *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    char err[128] = "";

    CURL *curl = curl_easy_init();
    f.curl = curl;
    /* First, before any early exit: without it even curl_easy_cleanup()
     * touches SIGPIPE's disposition (rt_sigaction, not in the allowlist). */
    if (curl)
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    if (!curl || !resolve_entry(job, &resolve, err, sizeof err)) {
        out->terr = "internal";
        set_detail(out, err[0] ? err : "curl_easy_init failed");
        goto done;
    }
    for (size_t i = 0; i < job->n_headers; i++) {
        struct curl_slist *next = curl_slist_append(headers, job->headers[i]);
        if (!next) {
            out->terr = "internal";
            set_detail(out, "out of memory");
            goto done;
        }
        headers = next;
    }

    CURLcode rc = CURLE_OK;
#define SET(opt, val) \
    do { if (rc == CURLE_OK) rc = curl_easy_setopt(curl, opt, val); } while (0)
    SET(CURLOPT_URL, job->url);
    if (resolve)
        SET(CURLOPT_RESOLVE, resolve);
    SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
    SET(CURLOPT_OPENSOCKETDATA, &f);
    SET(CURLOPT_SOCKOPTFUNCTION, socket_is_connected);
    SET(CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    SET(CURLOPT_CLOSESOCKETDATA, &f);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_TIMEOUT_MS, (long)job->timeout_ms);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SET(CURLOPT_ACCEPT_ENCODING, ""); /* every decoder built in: gzip, br, zstd */
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_NOPROXY, "*");
    SET(CURLOPT_FORBID_REUSE, 1L);
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    /* No system CA store: files cannot be opened once confined, and the broker
     * decides which CAs a worker trusts. */
    SET(CURLOPT_CAINFO, NULL);
    SET(CURLOPT_CAPATH, NULL);
    if (ca_store) {
        if (rc == CURLE_OK)
            rc = vf_ca_store_attach(curl, ca_store);
    } else if (job->ca_pem && job->ca_pem_len) {
        struct curl_blob blob = { .data = job->ca_pem, .len = job->ca_pem_len,
                                  .flags = CURL_BLOB_NOCOPY };
        SET(CURLOPT_CAINFO_BLOB, &blob);
    }
    SET(CURLOPT_USERAGENT, "verifetch");
    SET(CURLOPT_HTTPHEADER, headers);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, &f);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, &f);
    SET(CURLOPT_ERRORBUFFER, errbuf);
#undef SET
    if (rc != CURLE_OK) {
        out->terr = "internal";
        set_detail(out, curl_easy_strerror(rc));
        goto done;
    }

    rc = curl_easy_perform(curl);
    record_response(curl, out);
    if (f.body_too_large) {
        out->terr = "too_large";
        snprintf(out->detail, sizeof out->detail, "decoded body exceeds %llu bytes",
                 (unsigned long long)job->max_body);
    } else if (f.headers_too_large) {
        out->terr = "protocol";
        set_detail(out, "response headers too large");
    } else if (out->body.oom) {
        out->terr = "internal";
        set_detail(out, "out of memory");
    } else if (rc != CURLE_OK) {
        out->terr = map_curl_error(rc, out->status != 0);
        set_detail(out, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    } else if (out->location && strlen(out->location) > VF_IPC_MAX_URL) {
        out->terr = "protocol";
        set_detail(out, "Location header too long");
    }

done:
    if (curl)
        curl_easy_cleanup(curl);
    curl_slist_free_all(resolve);
    curl_slist_free_all(headers);
    if (!f.sock_closed)
        close(sock);
}

void vf_fetch_result_free(vf_fetch_result *r)
{
    free(r->content_type);
    free(r->location);
    free(r->cache_control);
    r->cache_control = NULL;
    vf_tbuf_free(&r->body);
    r->content_type = r->location = NULL;
}
