/* A minimal HTTP/1.1 client on one kept-alive unix-socket connection, for
 * benchmarks: no per-request connect, no library setup, no log scan, so what
 * it measures is mostly the server. Responses must carry Content-Length. */
#ifndef VERIFETCH_TESTS_BENCH_KEEPALIVE_CLIENT_H
#define VERIFETCH_TESTS_BENCH_KEEPALIVE_CLIENT_H

#include <stddef.h>

typedef struct {
    int fd;
    char *buf;          /* the last response's body, NUL-terminated */
    size_t cap;
} ka_conn;

/* 0, or -1 (errno set). */
int ka_open(ka_conn *c, const char *socket_path);
void ka_close(ka_conn *c);

/* Sends one request (body may be NULL) and reads the whole response. The HTTP
 * status, or -1 on an I/O or framing error; the body is in c->buf. */
int ka_request(ka_conn *c, const char *method, const char *path, const char *body);

#endif
