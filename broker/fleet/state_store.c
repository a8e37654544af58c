#include "broker/fleet/state_store.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/log_limit.h"

#define QUEUE_MAX 32u
/* Unread replies at most: a queue's worth, plus SCRIPT LOAD and a resend per
 * EVALSHA that met NOSCRIPT. */
#define PENDING_MAX (QUEUE_MAX * 4u)

/* A deferred write sent and not answered yet: an EVALSHA keeps its script
 * and RESP, so a NOSCRIPT reply (SCRIPT FLUSH, a restarted server) is
 * answered by loading the script and sending the write again. */
typedef struct {
    vf_state_script *script;   /* NULL: no resend possible or needed */
    char *cmd;
    int len;
    vf_state_ticket *ticket;   /* a script sent ahead: its reply is kept for its waiter */
} pending;

struct vf_state {
    pthread_mutex_t lock;
    redisContext *ctx;         /* NULL while disconnected */
    char *unix_path, *host, *password, *prefix;
    int port;
    uint64_t retry_at_ms;      /* no connection attempt before this */
    unsigned backoff_ms;
    bool failing;              /* the last operation failed */
    unsigned unread;           /* replies to deferred writes not read yet (they come first) */
    pending sent[PENDING_MAX]; /* what each unread reply answers, oldest at sent_at */
    unsigned sent_at;
    pending stash[PENDING_MAX];  /* writes that met NOSCRIPT, to send again */
    unsigned n_stash;
    atomic_uint_fast64_t errors;
    atomic_uint_fast64_t trips;   /* times a caller waited for a reply */
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

static void note_failure(vf_state *s, bool drop_connection);

/* Caller holds the lock. Forgets the unread replies (the connection is gone). */
static void pending_drop(vf_state *s)
{
    for (unsigned i = 0; i < s->unread; i++) {
        pending *p = &s->sent[(s->sent_at + i) % PENDING_MAX];
        redisFreeCommand(p->cmd);
        if (p->ticket)
            *p->ticket = (vf_state_ticket){ .reply = NULL, .done = true };   /* its waiter falls back */
    }
    for (unsigned i = 0; i < s->n_stash; i++)
        redisFreeCommand(s->stash[i].cmd);
    s->unread = 0;
    s->sent_at = 0;
    s->n_stash = 0;
}

/* Caller holds the lock and a connection: cmd into the output buffer, its
 * reply owed (cmd is kept for a resend when script is set, else freed). */
static void pending_send(vf_state *s, vf_state_script *script, char *cmd, int len)
{
    if (s->unread == PENDING_MAX || redisAppendFormattedCommand(s->ctx, cmd, (size_t)len) != REDIS_OK) {
        redisFreeCommand(cmd);
        note_failure(s, false);   /* a write lost is counted, never silent */
        return;
    }
    pending *p = &s->sent[(s->sent_at + s->unread++) % PENDING_MAX];
    p->script = script;
    p->cmd = script ? cmd : NULL;
    p->len = len;
    p->ticket = NULL;
    if (!script)
        redisFreeCommand(cmd);
}

/* Caller holds the lock and a connection, with no reply owed: the writes
 * that met NOSCRIPT go again, each behind SCRIPT LOAD (once: a resend
 * carries no script). Only here, so replies keep arriving in the order sent. */
static void resend_noscript(vf_state *s)
{
    for (unsigned i = 0; i < s->n_stash; i++) {
        const char *argv[3] = { "SCRIPT", "LOAD", s->stash[i].script->source };
        char *load = NULL;
        int n = redisFormatCommandArgv(&load, 3, argv, NULL);
        if (n >= 0)
            pending_send(s, NULL, load, n);
        pending_send(s, NULL, s->stash[i].cmd, s->stash[i].len);
    }
    s->n_stash = 0;
}

/* Caller holds the lock. */
static void note_failure(vf_state *s, bool drop_connection)
{
    atomic_fetch_add(&s->errors, 1);
    s->failing = true;
    if (drop_connection && s->ctx) {
        redisFree(s->ctx);
        s->ctx = NULL;
        pending_drop(s);
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

/* ---- deferred writes ----------------------------------------------------
 * A thread's writes (vf_state_write*) wait in its queue while a batch is
 * open; they go out in the same write() as the thread's next command, or at
 * vf_state_defer_send. Their replies are read by whoever uses the connection
 * next (s->unread), so no one waits a round trip for them. */

typedef struct {
    bool open;
    unsigned n;
    char *cmd[QUEUE_MAX];     /* RESP, from redisFormatCommandArgv */
    int len[QUEUE_MAX];
    vf_state_script *script[QUEUE_MAX];   /* set for an EVALSHA */
} write_queue;

/* initial-exec: a plain TLS offset, no __tls_get_addr call (which would make
 * verifetchd need ld.so itself; the container check rejects that). */
static __thread __attribute__((tls_model("initial-exec"))) write_queue queue;

static void queue_clear(void)
{
    for (unsigned i = 0; i < queue.n; i++)
        redisFreeCommand(queue.cmd[i]);
    queue.n = 0;
}

/* Caller holds the lock and a connection, with a reply owed: reads the
 * oldest (a deferred write's is checked and freed; a ticket's is filed for
 * its waiter). false when the connection failed (every ticket then done). */
static bool read_one(vf_state *s)
{
    void *reply = NULL;
    if (redisGetReply(s->ctx, &reply) != REDIS_OK) {
        note_failure(s, true);   /* drops what is still owed, tickets included */
        return false;
    }
    pending p = s->sent[s->sent_at];
    s->sent_at = (s->sent_at + 1) % PENDING_MAX;
    s->unread--;
    redisReply *r = reply;
    if (p.ticket) {
        *p.ticket = (vf_state_ticket){ .reply = r, .done = true };
        return true;
    }
    bool stashed = r && r->type == REDIS_REPLY_ERROR && p.script && strncmp(r->str, "NOSCRIPT", 8) == 0 &&
                   s->n_stash < PENDING_MAX;
    if (stashed)
        s->stash[s->n_stash++] = p;   /* resend_noscript sends it again */
    else
        redisFreeCommand(p.cmd);
    if (r && r->type == REDIS_REPLY_ERROR && !stashed) {
        if (vf_log_limit_take("state_store_error"))
            fprintf(stderr, "verifetchd: shared state write failed: %.200s\n", r->str);
        note_failure(s, false);
    }
    freeReplyObject(r);
    return true;
}

/* Caller holds the lock. Reads every reply owed to earlier sends. */
static bool read_unread(vf_state *s)
{
    while (s->unread > 0 && s->ctx) {
        if (!read_one(s))
            return false;
    }
    return s->ctx != NULL;
}

static void write_out(vf_state *s);

/* Caller holds the lock. Every owed reply read; writes that met NOSCRIPT
 * queued again at the front of the output. */
static bool catch_up(vf_state *s)
{
    if (!read_unread(s))
        return false;
    resend_noscript(s);
    return true;
}

/* Caller holds the lock and a connection: this thread's queue into the output buffer. */
static void append_queue(vf_state *s)
{
    for (unsigned i = 0; i < queue.n; i++)
        pending_send(s, queue.script[i], queue.cmd[i], queue.len[i]);   /* takes the command */
    queue.n = 0;
}

/* Caller holds the lock and a connection. NULL after counting a failure;
 * an error reply is returned as is when keep_errors. The thread's queued
 * writes go out in the same write(), ahead of the command. */
static redisReply *run(vf_state *s, int argc, const char **argv, const size_t *lens, bool keep_errors)
{
    if (!catch_up(s))
        return NULL;
    append_queue(s);
    if (redisAppendCommandArgv(s->ctx, argc, argv, lens) != REDIS_OK) {
        note_failure(s, true);
        return NULL;
    }
    if (!read_unread(s))
        return NULL;
    void *reply = NULL;
    atomic_fetch_add(&s->trips, 1);
    redisReply *r = redisGetReply(s->ctx, &reply) == REDIS_OK ? reply : NULL;
    if (!r) {
        note_failure(s, true);   /* I/O error or timeout: the connection is unusable */
        return NULL;
    }
    if (s->n_stash) {   /* nothing is owed now: the resends go out, their replies read later */
        resend_noscript(s);
        write_out(s);
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

#define EVAL_MAX_ARGS 48

typedef struct {
    const char *av[EVAL_MAX_ARGS];
    size_t al[EVAL_MAX_ARGS];
    char nk[16];
    int argc;
} eval_args;

/* EVAL(SHA) <script> nkeys argv...: slots 0 and 1 are filled by the caller. */
static bool eval_args_fill(eval_args *e, int nkeys, int argc, const char **argv, const size_t *lens)
{
    if (argc < 0 || argc + 3 > EVAL_MAX_ARGS)
        return false;
    snprintf(e->nk, sizeof e->nk, "%d", nkeys);
    for (int i = 0; i < argc; i++) {
        e->av[i + 3] = argv[i];
        e->al[i + 3] = lens ? lens[i] : strlen(argv[i]);
    }
    e->av[2] = e->nk;
    e->al[2] = strlen(e->nk);
    e->argc = argc + 3;
    return true;
}

static void eval_args_source(eval_args *e, const vf_state_script *script)
{
    e->av[0] = "EVAL";
    e->al[0] = 4;
    e->av[1] = script->source;
    e->al[1] = strlen(script->source);
}

redisReply *vf_state_eval(vf_state *s, vf_state_script *script, int nkeys, int argc, const char **argv,
                          const size_t *lens)
{
    eval_args e;
    if (!s || !eval_args_fill(&e, nkeys, argc, argv, lens))
        return NULL;
    pthread_mutex_lock(&s->lock);
    script_sha(script);   /* under the lock: two threads never write sha1 at once */
    e.av[0] = "EVALSHA";
    e.al[0] = 7;
    e.av[1] = script->sha1;
    e.al[1] = 40;
    redisReply *r = NULL;
    if (ensure_connected(s)) {
        r = run(s, e.argc, e.av, e.al, true);
        if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
            /* First use on this server (or after SCRIPT FLUSH / a restart): EVAL caches it. */
            freeReplyObject(r);
            eval_args_source(&e, script);
            r = s->ctx ? run(s, e.argc, e.av, e.al, true) : NULL;
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

bool vf_state_eval_send(vf_state *s, vf_state_script *script, int nkeys, int argc, const char **argv,
                        const size_t *lens, vf_state_ticket *t)
{
    eval_args e;
    if (!s || !eval_args_fill(&e, nkeys, argc, argv, lens) || pthread_mutex_trylock(&s->lock) != 0)
        return false;
    bool sent = false;
    if (s->ctx && s->unread < PENDING_MAX) {
        script_sha(script);
        e.av[0] = "EVALSHA";
        e.al[0] = 7;
        e.av[1] = script->sha1;
        e.al[1] = 40;
        char *cmd = NULL;
        int len = redisFormatCommandArgv(&cmd, e.argc, e.av, e.al);
        if (len >= 0 && redisAppendFormattedCommand(s->ctx, cmd, (size_t)len) == REDIS_OK) {
            *t = (vf_state_ticket){ 0 };
            s->sent[(s->sent_at + s->unread++) % PENDING_MAX] = (pending){ .ticket = t };
            write_out(s);   /* a failure drops the connection and marks t done */
            sent = true;
        }
        redisFreeCommand(cmd);
    }
    pthread_mutex_unlock(&s->lock);
    return sent;
}

redisReply *vf_state_eval_wait(vf_state *s, vf_state_ticket *t, bool *noscript)
{
    *noscript = false;
    pthread_mutex_lock(&s->lock);
    while (!t->done && s->ctx && s->unread > 0 && read_one(s)) {
    }
    redisReply *r = t->done ? t->reply : NULL;
    *t = (vf_state_ticket){ .reply = NULL, .done = true };
    atomic_fetch_add(&s->trips, 1);
    if (r && r->type == REDIS_REPLY_ERROR) {
        *noscript = strncmp(r->str, "NOSCRIPT", 8) == 0;
        if (!*noscript) {
            if (vf_log_limit_take("state_store_error"))
                fprintf(stderr, "verifetchd: shared state script error: %.200s\n", r->str);
            note_failure(s, false);
        }
        freeReplyObject(r);
        r = NULL;
    } else if (r) {
        s->failing = false;
    }
    if (s->ctx && s->unread == 0 && s->n_stash) {   /* nothing owed: writes that met NOSCRIPT go again */
        resend_noscript(s);
        write_out(s);
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

/* Caller holds the lock and a connection: everything buffered goes out now. */
static void write_out(vf_state *s)
{
    int done = 0;
    while (!done && s->ctx) {
        if (redisBufferWrite(s->ctx, &done) != REDIS_OK)
            note_failure(s, true);
    }
}

/* This thread's queue goes out in one write; its replies are read later. */
static void send_queue(vf_state *s)
{
    pthread_mutex_lock(&s->lock);
    if (ensure_connected(s) && catch_up(s)) {
        append_queue(s);
        write_out(s);
    }
    queue_clear();   /* the store is down: local state has taken over */
    pthread_mutex_unlock(&s->lock);
}

static void enqueue(vf_state *s, vf_state_script *script, int argc, const char **argv, const size_t *lens)
{
    if (queue.n == QUEUE_MAX)
        send_queue(s);
    char *cmd = NULL;
    int len = redisFormatCommandArgv(&cmd, argc, argv, lens);
    if (len < 0)
        return;
    queue.cmd[queue.n] = cmd;
    queue.script[queue.n] = script;
    queue.len[queue.n++] = len;
}

void vf_state_write(vf_state *s, int argc, const char **argv, const size_t *lens)
{
    if (!s)
        return;
    if (queue.open) {
        enqueue(s, NULL, argc, argv, lens);
        return;
    }
    redisReply *r = vf_state_command(s, argc, argv, lens);
    if (r)
        freeReplyObject(r);
}

void vf_state_write_eval(vf_state *s, vf_state_script *script, int nkeys, int argc, const char **argv,
                         const size_t *lens)
{
    if (!s)
        return;
    if (!queue.open) {
        redisReply *r = vf_state_eval(s, script, nkeys, argc, argv, lens);
        if (r)
            freeReplyObject(r);
        return;
    }
    eval_args e;
    if (!eval_args_fill(&e, nkeys, argc, argv, lens))
        return;
    /* By hash: a NOSCRIPT reply is answered when it is read (pending_resend). */
    pthread_mutex_lock(&s->lock);
    script_sha(script);
    pthread_mutex_unlock(&s->lock);
    e.av[0] = "EVALSHA";
    e.al[0] = 7;
    e.av[1] = script->sha1;
    e.al[1] = 40;
    enqueue(s, script, e.argc, e.av, e.al);
}

void vf_state_defer_begin(void)
{
    queue.open = true;
}

void vf_state_defer_send(vf_state *s)
{
    queue.open = false;
    if (queue.n == 0)
        return;
    if (s)
        send_queue(s);
    queue_clear();
}

void vf_state_settle(vf_state *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    if (s->unread && catch_up(s) && s->unread)
        write_out(s);   /* resends of writes that met NOSCRIPT */
    pthread_mutex_unlock(&s->lock);
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

uint64_t vf_state_round_trips(const vf_state *s)
{
    return s ? atomic_load(&((vf_state *)s)->trips) : 0;
}

const char *vf_state_prefix(const vf_state *s)
{
    return s ? s->prefix : VF_STATE_DEFAULT_PREFIX;
}
