/* The zygote's prepared TLS client context (worker/fetch/client_ctx.c): who
 * gets it, and that two workers forked from one preparation do not hold the
 * same secrets. */
#include <criterion/criterion.h>
#include <openssl/ssl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker/fetch/client_ctx.h"

#define TICKET_KEYS 80

Test(client_ctx, without_preparation_openssl_makes_each_one)
{
    SSL_CTX *a = SSL_CTX_new(TLS_client_method());
    cr_assert_not_null(a);
    cr_assert_eq(vf_client_ctx_counts_get().taken, 0);
    SSL_CTX_free(a);
}

Test(client_ctx, the_first_client_request_takes_it_and_only_that_one)
{
    cr_assert(vf_client_ctx_prepare());
    SSL_CTX *server = SSL_CTX_new(TLS_server_method());
    cr_assert_not_null(server);
    vf_client_ctx_counts c = vf_client_ctx_counts_get();
    cr_assert_eq(c.made, 1, "a server context is never the prepared one");
    cr_assert_eq(c.taken, 0);
    SSL_CTX *first = SSL_CTX_new(TLS_client_method());
    SSL_CTX *second = SSL_CTX_new(TLS_client_method());
    cr_assert_not_null(first);
    cr_assert_not_null(second);
    cr_assert_neq(first, second);
    c = vf_client_ctx_counts_get();
    cr_assert_eq(c.taken, 1);
    cr_assert_eq(c.made, 2);
    /* What curl does with it at the end: the context stays usable until then. */
    SSL *ssl = SSL_new(first);
    cr_assert_not_null(ssl);
    SSL_free(ssl);
    SSL_CTX_free(first);
    SSL_CTX_free(second);
    SSL_CTX_free(server);
}

/* A child takes the context and writes its ticket keys to fd. */
static void take_and_report(int fd)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    unsigned char keys[TICKET_KEYS];
    bool ok = ctx && vf_client_ctx_counts_get().taken == 1 &&
              SSL_CTX_get_tlsext_ticket_keys(ctx, keys, sizeof keys) == 1;
    _exit(ok && write(fd, keys, sizeof keys) == (ssize_t)sizeof keys ? 0 : 1);
}

Test(client_ctx, forked_takers_do_not_share_its_ticket_keys)
{
    cr_assert(vf_client_ctx_prepare());
    unsigned char keys[2][TICKET_KEYS];
    for (int i = 0; i < 2; i++) {
        int p[2];
        cr_assert_eq(pipe(p), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
            take_and_report(p[1]);
        close(p[1]);
        cr_assert_eq(read(p[0], keys[i], TICKET_KEYS), TICKET_KEYS, "child %d took no context", i);
        close(p[0]);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    cr_assert_neq(memcmp(keys[0], keys[1], TICKET_KEYS), 0, "two workers hold the same ticket keys");
}
