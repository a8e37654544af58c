#include "broker/lookup/resolve_connect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/local_cause.h"
#include "ipc/ipc_frame.h"

#define VF_MAX_ADDRESSES 16

static void numeric_host(const struct sockaddr *sa, char *buf, size_t len)
{
    if (getnameinfo(sa, sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6),
                    buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(buf, len, "?");
}

static void set_port(struct sockaddr *sa, uint16_t port)
{
    if (sa->sa_family == AF_INET)
        ((struct sockaddr_in *)sa)->sin_port = htons(port);
    else
        ((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

/* Non-blocking connect bounded by the deadline; returns 0, or an errno value. */
static int connect_bounded(const struct sockaddr *sa, socklen_t salen, int64_t deadline_ms, int *fd_out)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int rc = connect(fd, sa, salen);
    if (rc != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return e;
    }
    while (rc != 0) {
        int64_t left = deadline_ms - vf_now_ms();
        if (left <= 0) {
            close(fd);
            return ETIMEDOUT;
        }
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        int soerr = 0;
        socklen_t l = sizeof soerr;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l);
        if (soerr != 0) {
            close(fd);
            return soerr;
        }
        rc = 0;
    }
    /* The worker does blocking I/O through curl's poll loop; hand it a normal
     * socket. O_NONBLOCK is the only status flag socket() gave it. */
    fcntl(fd, F_SETFL, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *fd_out = fd;
    return 0;
}

/* curl's URL API keeps brackets around IPv6 literals; the resolver and the
 * host rules want the bare name. */
static int bare_host(const char *host, char *bare, size_t cap)
{
    size_t hl = strlen(host);
    if (hl >= cap)
        return -1;
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memcpy(bare, host + 1, hl - 2);
        bare[hl - 2] = '\0';
    } else {
        memcpy(bare, host, hl + 1);
    }
    return 0;
}

static int resolve(const char *bare, struct addrinfo **res, char *detail, size_t dlen)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
    int rc = getaddrinfo(bare, NULL, &hints, res);
    if (rc != 0) {
        snprintf(detail, dlen, "could not resolve host '%.200s': %s", bare, gai_strerror(rc));
        return -1;
    }
    return 0;
}

vf_connect_status vf_resolve_connect(const char *host, uint16_t port,
                                     const vf_egress_policy *policy,
                                     int64_t deadline_ms, vf_connection *out)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    char bare[256];
    if (bare_host(host, bare, sizeof bare) != 0) {
        snprintf(out->detail, sizeof out->detail, "host name is too long");
        return VF_CONNECT_RESOLVE_FAILED;
    }
    /* A name rule refuses before any DNS query leaves the broker. */
    const char *by_name = vf_egress_host_check(policy, bare);
    if (by_name) {
        out->denied_rule = by_name;
        vf_egress_describe_host(by_name, bare, NULL, out->detail, sizeof out->detail);
        return VF_CONNECT_DENIED;
    }
    struct addrinfo *res = NULL;
    if (resolve(bare, &res, out->detail, sizeof out->detail) != 0)
        return VF_CONNECT_RESOLVE_FAILED;
    /* IP literals carry no name a host rule could vouch for. */
    struct in6_addr probe6;
    struct in_addr probe4;
    bool literal = inet_pton(AF_INET, bare, &probe4) == 1 || inet_pton(AF_INET6, bare, &probe6) == 1;

    vf_connect_status status = VF_CONNECT_DENIED;
    int tried = 0, last_err = 0;
    char last_ip[64] = "";
    for (struct addrinfo *ai = res; ai && tried < VF_MAX_ADDRESSES; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        struct sockaddr_storage ss;
        memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
        set_port((struct sockaddr *)&ss, port);
        const char *rule = vf_egress_check_host(policy, literal ? NULL : bare, (struct sockaddr *)&ss);
        if (rule) {
            if (!out->denied_rule) {
                out->denied_rule = rule;
                vf_egress_describe_host(rule, bare, (struct sockaddr *)&ss, out->detail, sizeof out->detail);
            }
            continue;
        }
        tried++;
        numeric_host((struct sockaddr *)&ss, last_ip, sizeof last_ip);
        int fd = -1;
        last_err = connect_bounded((struct sockaddr *)&ss, ai->ai_addrlen, deadline_ms, &fd);
        if (last_err == 0) {
            out->fd = fd;
            snprintf(out->ip, sizeof out->ip, "%s", last_ip);
            out->denied_rule = NULL;
            out->detail[0] = '\0';
            status = VF_CONNECT_OK;
            break;
        }
        if (last_err == ETIMEDOUT) {
            status = VF_CONNECT_TIMEOUT;
            break;
        }
        if (vf_local_exhaustion(last_err)) {
            status = VF_CONNECT_LOCAL;
            break;
        }
        status = VF_CONNECT_FAILED;
    }
    freeaddrinfo(res);
    if (status == VF_CONNECT_FAILED || status == VF_CONNECT_TIMEOUT) {
        out->denied_rule = NULL;
        if (status == VF_CONNECT_TIMEOUT)
            snprintf(out->detail, sizeof out->detail, "connect to %s port %u timed out", last_ip, port);
        else
            snprintf(out->detail, sizeof out->detail, "connect to %s port %u failed: %s", last_ip, port,
                     strerror(last_err));
    } else if (status == VF_CONNECT_LOCAL) {
        out->denied_rule = NULL;
        char what[96];
        snprintf(what, sizeof what, "connect to %s port %u not tried", last_ip, port);
        vf_local_detail(out->detail, sizeof out->detail, last_err, true, what);
    } else if (status == VF_CONNECT_DENIED && !out->denied_rule) {
        snprintf(out->detail, sizeof out->detail, "host '%.200s' has no IPv4/IPv6 address", host);
        status = VF_CONNECT_RESOLVE_FAILED;
    }
    return status;
}
