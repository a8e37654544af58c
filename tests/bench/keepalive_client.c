#include "keepalive_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define HEAD_MAX 8192

int ka_open(ka_conn *c, const char *socket_path)
{
    memset(c, 0, sizeof *c);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path);
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -1;
    if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

void ka_close(ka_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int reserve(ka_conn *c, size_t n)
{
    if (n <= c->cap)
        return 0;
    char *grown = realloc(c->buf, n);
    if (!grown)
        return -1;
    c->buf = grown;
    c->cap = n;
    return 0;
}

int ka_request(ka_conn *c, const char *method, const char *path, const char *body)
{
    char head[512];
    size_t blen = body ? strlen(body) : 0;
    int hn = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\n\r\n", method, path, blen);
    if (hn < 0 || (size_t)hn >= sizeof head || send_all(c->fd, head, (size_t)hn) != 0 ||
        (blen && send_all(c->fd, body, blen) != 0))
        return -1;
    /* Head first (byte-wise reads would cost syscalls: read big, keep the rest as body). */
    char in[HEAD_MAX];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof in - 1)
            return -1;
        ssize_t r = recv(c->fd, in + have, sizeof in - 1 - have, 0);
        if (r <= 0)
            return -1;
        have += (size_t)r;
        in[have] = '\0';
        end = strstr(in, "\r\n\r\n");
    }
    int status = 0;
    if (sscanf(in, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    const char *cl = NULL;
    for (const char *line = strstr(in, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n"))
        if (strncasecmp(line + 2, "Content-Length:", 15) == 0)
            cl = line + 17;
    if (!cl)
        return -1;
    size_t len = strtoul(cl, NULL, 10), got = have - (size_t)(end + 4 - in);
    if (got > len || reserve(c, len + 1) != 0)
        return -1;
    memcpy(c->buf, end + 4, got);
    while (got < len) {
        ssize_t r = recv(c->fd, c->buf + got, len - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    c->buf[len] = '\0';
    return status;
}
