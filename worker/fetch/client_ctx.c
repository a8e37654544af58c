#include "worker/fetch/client_ctx.h"

#include "worker/fetch/fork_random.h"

#include <openssl/rand.h>
#include <openssl/ssl.h>

static SSL_CTX *prepared;
/* Volatile so the store survives optimisation: the worker holds this reference
 * until it exits, and a leak checker must see it as held, not lost. */
static SSL_CTX *volatile handed_out;
static vf_client_ctx_counts counts;

bool vf_client_ctx_prepare(void)
{
    if (!prepared)
        prepared = SSL_CTX_new_ex(NULL, NULL, TLS_client_method());
    counts = (vf_client_ctx_counts){ 0 };
    return prepared != NULL;
}

vf_client_ctx_counts vf_client_ctx_counts_get(void)
{
    return counts;
}

/* Every forked copy starts with the zygote's session-ticket keys. A client
 * never uses them (they encrypt a server's tickets), but a context of our own
 * should not hold what another worker holds: new ones, as SSL_CTX_new draws. */
static bool renew_ticket_keys(SSL_CTX *ctx)
{
    unsigned char keys[80]; /* name 16, HMAC 32, AES 32: OpenSSL's layout */
    bool ok = RAND_priv_bytes(keys, sizeof keys) == 1 &&
              SSL_CTX_set_tlsext_ticket_keys(ctx, keys, sizeof keys) == 1;
    OPENSSL_cleanse(keys, sizeof keys);
    return ok;
}

/* Interposes OpenSSL's SSL_CTX_new for the whole worker: the static libcurl
 * binds to it at link time, a shared one through the executable's dynamic
 * symbol table, which comes before a shared libssl's. The prepared context goes to the
 * first client request; anything else gets what OpenSSL 3's SSL_CTX_new
 * returns (it is SSL_CTX_new_ex with the default library context).
 * The prepared one is as SSL_CTX_new left it: no session, no certificate, an
 * empty store (curl then installs the job's CAs, as in a fresh one). The extra
 * reference keeps curl's SSL_CTX_free from freeing it: its blocks lie all over
 * the heap the worker shares with the zygote, and freeing them copied ~25
 * pages per worker for a process that exits right after. */
#ifdef VF_WRAP_SSL_CTX_NEW
/* A static libssl defines SSL_CTX_new itself: the worker is then linked with
 * --wrap=SSL_CTX_new, which sends every call of it here. */
#define SSL_CTX_new __wrap_SSL_CTX_new
SSL_CTX *SSL_CTX_new(const SSL_METHOD *method);
#endif
SSL_CTX *SSL_CTX_new(const SSL_METHOD *method)
{
    vf_fork_random_settle(); /* a TLS context draws at once, its handshake often */
    if (prepared && method == TLS_client_method()) {
        SSL_CTX *ctx = prepared;
        prepared = NULL;
        if (renew_ticket_keys(ctx) && SSL_CTX_up_ref(ctx) == 1) {
            handed_out = ctx;
            counts.taken++;
            return ctx;
        }
        SSL_CTX_free(ctx);
    }
    counts.made++;
    return SSL_CTX_new_ex(NULL, NULL, method);
}
