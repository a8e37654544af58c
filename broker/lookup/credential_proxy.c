#include "broker/lookup/credential_proxy.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/lookup/provider_request.h"
#include "broker/lookup/stream_mask.h"
#include "broker/lookup/tls_upstream.h"
#include "ipc/ipc_frame.h"

static bool line_is(const char *line, size_t len, const char *name, const char **value, size_t *vlen)
{
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
        return false;
    const char *v = line + nl + 1;
    const char *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    *value = v;
    *vlen = (size_t)(end - v);
    return true;
}

const char *vf_proxy_check_request(const char *head, size_t len, const char *expected_target,
                                   const char *expected_host)
{
    const char *eol = memmem(head, len, "\r\n", 2);
    if (!eol)
        return "request line missing";
    char want[VF_PROXY_MAX_REQUEST_HEAD];
    int wn = snprintf(want, sizeof want, "GET %s HTTP/1.1", expected_target);
    if (wn < 0 || (size_t)wn >= sizeof want)
        return "expected target too long";
    if ((size_t)(eol - head) != (size_t)wn || memcmp(head, want, (size_t)wn) != 0)
        return "request is not GET of the expected provider endpoint";
    bool host_ok = false, terminated = false;
    const char *p = eol + 2;
    const char *end = head + len;
    while (p < end) {
        const char *le = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (!le)
            return "malformed header section";
        size_t ll = (size_t)(le - p);
        if (ll == 0) {
            terminated = true;
            break;
        }
        if (memchr(p, '\0', ll))
            return "NUL byte in request headers";
        const char *v;
        size_t vl;
        if (line_is(p, ll, "Host", &v, &vl)) {
            if (host_ok || vl != strlen(expected_host) || strncasecmp(v, expected_host, vl) != 0)
                return "request Host is not the provider endpoint";
            host_ok = true;
        } else if (line_is(p, ll, "Content-Length", &v, &vl) || line_is(p, ll, "Transfer-Encoding", &v, &vl)) {
            return "request carries a body";
        } else if (line_is(p, ll, "Authorization", &v, &vl) || line_is(p, ll, "Proxy-Authorization", &v, &vl)) {
            return "worker may not send credentials";
        }
        p = le + 2;
    }
    if (!terminated)
        return "request head is not terminated";
    return host_ok ? NULL : "request has no Host header";
}

/* Read until the blank line that ends the head; the worker sends no body. */
static ssize_t read_head(int fd, char *buf, size_t cap, int64_t deadline_ms)
{
    size_t len = 0;
    while (len < cap) {
        int64_t left = deadline_ms - vf_now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        ssize_t r = recv(fd, buf + len, cap - len, 0);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        if (len >= 4 && memmem(buf, len, "\r\n\r\n", 4))
            return (ssize_t)len;
    }
    return -2;
}

static int send_all(int fd, const char *buf, size_t len, int64_t deadline_ms)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        int64_t left = deadline_ms - vf_now_ms();
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
    }
    return 0;
}

static void fail(vf_credential_proxy *p, const char *why)
{
    if (!p->failed) {
        p->failed = true;
        snprintf(p->detail, sizeof p->detail, "%s", why);
    }
}

#define VF_PROXY_MAX_RESPONSE_HEAD (64u * 1024u)

/* Where a response head ends as curl reads it: lines end at LF (a CR
 * before it is dropped), so the head ends at the first empty line, LF or
 * CRLF. Returns the offset just past it, 0 while it has not arrived. */
static size_t response_head_end(const char *head, size_t len)
{
    for (const char *nl = head; (nl = memchr(nl, '\n', len - (size_t)(nl - head))); nl++) {
        const char *next = nl + 1;
        size_t left = len - (size_t)(next - head);
        if (left >= 1 && next[0] == '\n')
            return (size_t)(next - head) + 1;
        if (left >= 2 && next[0] == '\r' && next[1] == '\n')
            return (size_t)(next - head) + 2;
    }
    return 0;
}

/* The one thing the proxy needs from a response is its coding. We asked for
 * identity over HTTP/1.0; a provider that compresses or chunks anyway would
 * hide the key from the mask while the worker decodes it, so refuse. The
 * head is read as curl reads it (LF lines, CR optional), and anything curl
 * might read differently from us is refused too: an interim 1xx head
 * (curl skips it and obeys the next), a folded line, a stray CR or NUL, a
 * line that is not "name: value". head[0..len) ends with its empty line. */
static const char *check_response_head(const char *head, size_t len)
{
    const char *p = head, *end = head + len;
    for (unsigned line = 0; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = (size_t)(nl - p);
        if (ll > 0 && p[ll - 1] == '\r')
            ll--;
        if (ll == 0)
            break;
        if (memchr(p, '\0', ll) || memchr(p, '\r', ll))
            return "provider response head has a stray CR or NUL";
        if (line == 0) {
            bool http1 = ll >= 12 && (memcmp(p, "HTTP/1.0 ", 9) == 0 || memcmp(p, "HTTP/1.1 ", 9) == 0) &&
                         p[9] >= '1' && p[9] <= '5' && p[10] >= '0' && p[10] <= '9' && p[11] >= '0' &&
                         p[11] <= '9' && (ll == 12 || p[12] == ' ');
            if (!http1)
                return "provider status line is not HTTP/1.x";
            if (p[9] == '1')
                return "provider sent an interim 1xx head, which curl would skip";
        } else {
            const char *colon = memchr(p, ':', ll);
            if (p[0] == ' ' || p[0] == '\t')
                return "provider response head has a folded line";
            if (!colon || colon == p || memchr(p, ' ', (size_t)(colon - p)) || memchr(p, '\t', (size_t)(colon - p)))
                return "provider response head has a line that is not a header";
            const char *v;
            size_t vl;
            bool coding = line_is(p, ll, "Content-Encoding", &v, &vl) || line_is(p, ll, "Transfer-Encoding", &v, &vl);
            while (coding && vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            if (coding && !(vl == 0 || (vl == 8 && strncasecmp(v, "identity", 8) == 0)))
                return "provider answered with a content or transfer coding though identity was requested";
        }
        p = nl + 1;
    }
    return NULL;
}

static int forward(vf_credential_proxy *p, vf_stream_mask *m, const char *buf, size_t len)
{
    char *out = NULL;
    size_t out_len = 0;
    if (vf_stream_mask_feed(m, buf, len, &out, &out_len) != 0) {
        fail(p, "broker out of memory");
        return -1;
    }
    /* A failed send means the worker went away; its own result says why. */
    int s = out_len ? send_all(p->worker_fd, out, out_len, p->deadline_ms) : 0;
    free(out);
    return s;
}

static int pump(vf_credential_proxy *p, vf_upstream *up)
{
    vf_stream_mask m;
    vf_stream_mask_init(&m, p->mask, p->mask_lens, p->n_mask);
    char *head = malloc(VF_PROXY_MAX_RESPONSE_HEAD);
    size_t head_len = 0;
    bool head_done = false;
    char buf[16384];
    uint64_t total = 0;
    int rc = head ? 0 : -1;
    if (!head)
        fail(p, "broker out of memory");
    while (rc == 0) {
        ssize_t n = vf_upstream_read(up, buf, sizeof buf, p->deadline_ms);
        if (n < 0) {
            fail(p, vf_now_ms() >= p->deadline_ms ? "provider response timed out"
                                                 : "provider connection failed mid-response");
            rc = -1;
            break;
        }
        if (n == 0) {
            if (!head_done) {
                fail(p, "provider closed before a complete response head");
                rc = -1;
                break;
            }
            char *out = NULL;
            size_t out_len = 0;
            vf_stream_mask_finish(&m, &out, &out_len);
            if (out_len && send_all(p->worker_fd, out, out_len, p->deadline_ms) != 0)
                rc = -1;
            free(out);
            break;
        }
        total += (uint64_t)n;
        if (total > p->max_response) {
            fail(p, "provider response exceeds the size cap");
            rc = -1;
            break;
        }
        if (head_done) {
            rc = forward(p, &m, buf, (size_t)n);
            continue;
        }
        if (head_len + (size_t)n > VF_PROXY_MAX_RESPONSE_HEAD) {
            fail(p, "provider response head too large");
            rc = -1;
            break;
        }
        memcpy(head + head_len, buf, (size_t)n);
        head_len += (size_t)n;
        size_t eoh = response_head_end(head, head_len);
        if (!eoh)
            continue;
        const char *why = check_response_head(head, eoh);
        if (why) {
            fail(p, why);
            rc = -1;
            break;
        }
        head_done = true;
        rc = forward(p, &m, head, head_len);
    }
    if (head) {
        explicit_bzero(head, VF_PROXY_MAX_RESPONSE_HEAD);
        free(head);
    }
    vf_stream_mask_free(&m);
    return rc;
}

static void *proxy_main(void *arg)
{
    vf_credential_proxy *p = arg;
    char head[VF_PROXY_MAX_REQUEST_HEAD];
    ssize_t hl = read_head(p->worker_fd, head, sizeof head, p->deadline_ms);
    if (hl < 0) {
        fail(p, hl == -2 ? "worker request head too large" : "worker sent no complete request");
        goto out;
    }
    char host_header[300];
    bool default_port = (p->tls_ctx && p->port == 443) || (!p->tls_ctx && p->port == 80);
    if (default_port)
        snprintf(host_header, sizeof host_header, "%s", p->host);
    else
        snprintf(host_header, sizeof host_header, "%s:%u", p->host, p->port);
    /* The worker speaks plain http to host:port, so its Host omits only :80. */
    char worker_host[300];
    if (p->port == 80)
        snprintf(worker_host, sizeof worker_host, "%s", p->host);
    else
        snprintf(worker_host, sizeof worker_host, "%s:%u", p->host, p->port);
    const char *why = vf_proxy_check_request(head, (size_t)hl, p->expected_target, worker_host);
    if (why) {
        char msg[256];
        snprintf(msg, sizeof msg, "credential proxy refused the worker's request: %s", why);
        fail(p, msg);
        goto out;
    }
    vf_upstream up;
    char detail[512];
    int opened = vf_upstream_open(&up, p->tls_ctx, p->host, p->port, p->egress, p->deadline_ms, detail,
                                  sizeof detail);
    if (opened != 0) {
        p->local = !p->failed && opened == VF_UPSTREAM_LOCAL;
        fail(p, detail);
        goto out;
    }
    char *req = vf_provider_request(p->provider, p->expected_target, host_header, p->body);
    if (!req) {
        fail(p, "broker out of memory");
    } else {
        int w = vf_upstream_write_all(&up, req, strlen(req), p->deadline_ms);
        explicit_bzero(req, strlen(req));
        free(req);
        if (w != 0)
            fail(p, "could not send the request to the provider");
        else
            pump(p, &up);
    }
    vf_upstream_close(&up);
out:
    /* End of stream for the worker's HTTP parser. */
    shutdown(p->worker_fd, SHUT_WR);
    return NULL;
}

int vf_credential_proxy_start(vf_credential_proxy *p)
{
    p->failed = false;
    p->local = false;
    p->detail[0] = '\0';
    return pthread_create(&p->thread, NULL, proxy_main, p);
}

void vf_credential_proxy_finish(vf_credential_proxy *p)
{
    shutdown(p->worker_fd, SHUT_RDWR);
    pthread_join(p->thread, NULL);
}
