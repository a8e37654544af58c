/* The shared store (Redis or Valkey) behind fleet quotas, circuits and the
 * cache: one hiredis connection guarded by a mutex, short timeouts, Lua
 * scripts run with EVALSHA (EVAL on NOSCRIPT), and reconnection with
 * exponential backoff. Every failure is counted and reported as "store
 * unavailable" (NULL), so callers fall back to in-process state: the store
 * can slow a lookup by at most one timeout, never fail it. */
#ifndef VERIFETCH_FLEET_STATE_STORE_H
#define VERIFETCH_FLEET_STATE_STORE_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/fleet_config.h"

#define VF_STATE_TIMEOUT_MS      250u   /* connect and per command */
#define VF_STATE_BACKOFF_MIN_MS  50u
#define VF_STATE_BACKOFF_MAX_MS  2000u

typedef struct vf_state vf_state;

typedef struct {
    const char *source;   /* Lua text */
    char sha1[41];        /* filled on first use */
} vf_state_script;

/* Called once per failed operation (for the errors metric). */
typedef void (*vf_state_error_fn)(void *ctx);

/* Copies what it needs from cfg (which must have redis set). Connects lazily. */
vf_state *vf_state_new(const vf_state_config *cfg, vf_state_error_fn on_error, void *error_ctx);
void vf_state_free(vf_state *s);

/* A command with binary-safe arguments. NULL when the store is unavailable
 * (down, backing off, timed out) or answered with an error. Free the reply
 * with freeReplyObject. */
redisReply *vf_state_command(vf_state *s, int argc, const char **argv, const size_t *lens);

/* EVALSHA sha numkeys keys... args... (argv holds keys then args). */
redisReply *vf_state_eval(vf_state *s, vf_state_script *script, int nkeys, int argc, const char **argv,
                          const size_t *lens);

/* A script sent ahead (vf_state_eval_send) and answered later
 * (vf_state_eval_wait), possibly on another thread: whoever reads the
 * connection first files its reply here. */
typedef struct {
    redisReply *reply;   /* once done: the reply, or NULL when the connection failed */
    bool done;
} vf_state_ticket;

/* EVALSHA written now, its reply left for vf_state_eval_wait. Only on a live
 * connection nobody holds this instant, so it never waits for another
 * thread's round trip or a reconnect: false = not sent (run it later). Once
 * true, vf_state_eval_wait must be called on t exactly once. */
bool vf_state_eval_send(vf_state *s, vf_state_script *script, int nkeys, int argc, const char **argv,
                        const size_t *lens, vf_state_ticket *t);
/* The reply to a sent script, as vf_state_eval's (NULL when unavailable or an
 * error). *noscript: the server did not know the script, so it did not run
 * (then NULL): run it again with vf_state_eval. */
redisReply *vf_state_eval_wait(vf_state *s, vf_state_ticket *t, bool *noscript);

/* Writes whose reply nobody needs (lease releases, circuit records, cache
 * stores). While the calling thread has deferred writes on
 * (vf_state_defer_begin), they wait in its queue and go out in the same
 * write() as its next command, or all together at vf_state_defer_send, whose
 * replies are read by the next user of the connection (or vf_state_settle):
 * no one waits a round trip for them, and they reach the store before any
 * later command of this process. Otherwise each runs at once. */
void vf_state_write(vf_state *s, int argc, const char **argv, const size_t *lens);
void vf_state_write_eval(vf_state *s, vf_state_script *script, int nkeys, int argc, const char **argv,
                         const size_t *lens);
void vf_state_defer_begin(void);
/* One write for the thread's queue (s may be NULL: nothing to send); defer is off after. */
void vf_state_defer_send(vf_state *s);
/* Reads replies owed to sent writes (counting failures), so errors show without waiting for traffic. */
void vf_state_settle(vf_state *s);

/* true when the last operation failed or the store is backing off. When the
 * backoff has passed it tries a PING first, so readiness recovers by itself. */
bool vf_state_degraded(vf_state *s);

/* Failed operations since start. */
uint64_t vf_state_errors(const vf_state *s);

/* Commands a caller waited on a reply for (a pipelined batch is one). */
uint64_t vf_state_round_trips(const vf_state *s);

/* The configured key prefix ("verifetch:"). */
const char *vf_state_prefix(const vf_state *s);

#endif
