#include "broker/fleet/state_store.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/log_limit.h"

struct vf_state {
    pthread_mutex_t lock;
    redisContext *ctx;         /* NULL while disconnected */
    char *unix_path, *host, *password, *prefix;
    int port;
    uint64_t retry_at_ms;      /* no connection attempt before this */
    unsigned backoff_ms;
    bool failing;              /* the last operation failed */
    atomic_uint_fast64_t errors;
    vf_state_error_fn on_error;
    void *error_ctx;
};

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct timeval timeout_tv(void)
{
    return (struct timeval){ .tv_sec = 0, .tv_usec = VF_STATE_TIMEOUT_MS * 1000 };
}

vf_state *vf_state_new(const vf_state_config *cfg, vf_state_error_fn on_error, void *error_ctx)
{
    if (!cfg || !cfg->redis)
        return NULL;
    vf_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    s->unix_path = cfg->unix_path ? strdup(cfg->unix_path) : NULL;
    s->host = cfg->host ? strdup(cfg->host) : NULL;
    s->password = cfg->password ? strdup(cfg->password) : NULL;
    s->prefix = strdup(cfg->key_prefix ? cfg->key_prefix : VF_STATE_DEFAULT_PREFIX);
    s->port = cfg->port;
    s->backoff_ms = VF_STATE_BACKOFF_MIN_MS;
    s->on_error = on_error;
    s->error_ctx = error_ctx;
    if ((!s->unix_path && !s->host) || !s->prefix || (cfg->password && !s->password)) {
        vf_state_free(s);
        return NULL;
    }
    return s;
}

void vf_state_free(vf_state *s)
{
    if (!s)
        return;
    if (s->ctx)
        redisFree(s->ctx);
    free(s->unix_path);
    free(s->host);
    if (s->password) {
        explicit_bzero(s->password, strlen(s->password));
        free(s->password);
    }
    free(s->prefix);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Caller holds the lock. */
static void note_failure(vf_state *s, bool drop_connection)
{
    atomic_fetch_add(&s->errors, 1);
    s->failing = true;
    if (drop_connection && s->ctx) {
        redisFree(s->ctx);
        s->ctx = NULL;
    }
    if (!s->ctx) {
        s->retry_at_ms = mono_ms() + s->backoff_ms;
        s->backoff_ms = s->backoff_ms * 2 > VF_STATE_BACKOFF_MAX_MS ? VF_STATE_BACKOFF_MAX_MS : s->backoff_ms * 2;
    }
    if (s->on_error)
        s->on_error(s->error_ctx);
}

static bool authenticate(vf_state *s)
{
    if (!s->password)
        return true;
    const char *argv[2] = { "AUTH", s->password };
    size_t lens[2] = { 4, strlen(s->password) };
    redisReply *r = redisCommandArgv(s->ctx, 2, argv, lens);
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Caller holds the lock. true with s->ctx usable. */
static bool ensure_connected(vf_state *s)
{
    if (s->ctx)
        return true;
    if (mono_ms() < s->retry_at_ms)
        return false;
    s->ctx = s->unix_path ? redisConnectUnixWithTimeout(s->unix_path, timeout_tv())
                          : redisConnectWithTimeout(s->host, s->port, timeout_tv());
    if (!s->ctx || s->ctx->err || redisSetTimeout(s->ctx, timeout_tv()) != REDIS_OK || !authenticate(s)) {
        note_failure(s, true);
        return false;
    }
    s->backoff_ms = VF_STATE_BACKOFF_MIN_MS;
    return true;
}

/* Caller holds the lock and a connection. NULL after counting a failure;
 * an error reply is returned as is when keep_errors. */
static redisReply *run(vf_state *s, int argc, const char **argv, const size_t *lens, bool keep_errors)
{
    redisReply *r = redisCommandArgv(s->ctx, argc, argv, lens);
    if (!r) {
        note_failure(s, true);   /* I/O error or timeout: the connection is unusable */
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR && !keep_errors) {
        freeReplyObject(r);
        note_failure(s, false);
        return NULL;
    }
    s->failing = false;
    return r;
}

redisReply *vf_state_command(vf_state *s, int argc, const char **argv, const size_t *lens)
{
    if (!s)
        return NULL;
    pthread_mutex_lock(&s->lock);
    redisReply *r = ensure_connected(s) ? run(s, argc, argv, lens, false) : NULL;
    pthread_mutex_unlock(&s->lock);
    return r;
}

static void script_sha(vf_state_script *sc)
{
    if (sc->sha1[0])
        return;
    unsigned char md[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)sc->source, strlen(sc->source), md);
    for (int i = 0; i < SHA_DIGEST_LENGTH; i++)
        snprintf(sc->sha1 + 2 * i, 3, "%02x", md[i]);
}

#define EVAL_MAX_ARGS 24

redisReply *vf_state_eval(vf_state *s, vf_state_script *script, int nkeys, int argc, const char **argv,
                          const size_t *lens)
{
    if (!s || argc < 0 || argc + 3 > EVAL_MAX_ARGS)
        return NULL;
    const char *av[EVAL_MAX_ARGS];
    size_t al[EVAL_MAX_ARGS];
    char nk[16];
    snprintf(nk, sizeof nk, "%d", nkeys);
    for (int i = 0; i < argc; i++) {
        av[i + 3] = argv[i];
        al[i + 3] = lens ? lens[i] : strlen(argv[i]);
    }
    av[2] = nk;
    al[2] = strlen(nk);
    pthread_mutex_lock(&s->lock);
    script_sha(script);   /* under the lock: two threads never write sha1 at once */
    av[0] = "EVALSHA";
    al[0] = 7;
    av[1] = script->sha1;
    al[1] = 40;
    redisReply *r = NULL;
    if (ensure_connected(s)) {
        r = run(s, argc + 3, av, al, true);
        if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
            /* First use on this server (or after SCRIPT FLUSH / a restart): EVAL caches it. */
            freeReplyObject(r);
            av[0] = "EVAL";
            al[0] = 4;
            av[1] = script->source;
            al[1] = strlen(script->source);
            r = run(s, argc + 3, av, al, true);
        }
        if (r && r->type == REDIS_REPLY_ERROR) {
            if (vf_log_limit_take("state_store_error"))
                fprintf(stderr, "verifetchd: shared state script error: %.200s\n", r->str);
            freeReplyObject(r);
            r = NULL;
            note_failure(s, false);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

bool vf_state_degraded(vf_state *s)
{
    if (!s)
        return false;
    pthread_mutex_lock(&s->lock);
    if ((s->failing || !s->ctx) && ensure_connected(s)) {
        const char *argv[1] = { "PING" };
        size_t lens[1] = { 4 };
        redisReply *r = run(s, 1, argv, lens, false);
        if (r)
            freeReplyObject(r);
    }
    bool degraded = s->failing || !s->ctx;
    pthread_mutex_unlock(&s->lock);
    return degraded;
}

uint64_t vf_state_errors(const vf_state *s)
{
    return s ? atomic_load(&((vf_state *)s)->errors) : 0;
}

const char *vf_state_prefix(const vf_state *s)
{
    return s ? s->prefix : VF_STATE_DEFAULT_PREFIX;
}
