#include "broker/fleet/shared_quota.h"

#include <inttypes.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/fleet/fleet_keys.h"
#include "ipc/ipc_frame.h"

static vf_state_script acquire_script = { .source =
    VF_SHARED_QUOTA_LUA
    "return vf_quota(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])\n" };

/* One token back into a bucket, for an admission no lookup used: the
 * bucket keeps its time, so its refill goes on as before; never beyond its
 * size. A bucket gone (expired) is full anyway. */
static vf_state_script give_script = { .source =
    "local b = redis.call('GET', KEYS[1])\n"
    "if not b then return 0 end\n"
    "local units, at = string.match(b, '^(%d+) (%d+)$')\n"
    "if not units then return 0 end\n"
    "local cap = tonumber(ARGV[1]) * 60000\n"
    "units = math.min(cap, tonumber(units) + 60000)\n"
    "redis.call('SET', KEYS[1], string.format('%d %s', units, at), 'KEEPTTL')\n"
    "return 1\n" };

/* Per name: the leases this process holds, so release knows a member to
 * remove, and its slice of the fleet bucket. */
typedef struct {
    char name[VF_QUOTA_NAME_MAX + 1];
    uint64_t *seq;
    size_t n, cap;
    unsigned slice;             /* tokens granted and not yet spent */
    bool unlimited;             /* nothing counted fleet-wide: every hit may go */
    uint64_t slice_until;       /* monotonic ms; after it the slice is given back */
    const void *slice_tag;      /* the configuration it was granted under */
    vf_quota_limits slice_limits;
} held;

struct vf_shared_quota {
    vf_state *st;
    char scope[16];
    char instance[17];          /* random per process: lease members never collide across pods */
    pthread_mutex_t lock;
    uint64_t next_seq;
    held *held;
    size_t n_held, cap_held;
};

vf_shared_quota *vf_shared_quota_new(vf_state *st, const char *scope)
{
    vf_shared_quota *sq = calloc(1, sizeof *sq);
    if (!sq)
        return NULL;
    sq->st = st;
    snprintf(sq->scope, sizeof sq->scope, "%s", scope);
    unsigned char r[8];
    if (RAND_bytes(r, sizeof r) != 1) {
        free(sq);
        return NULL;
    }
    for (int i = 0; i < 8; i++)
        snprintf(sq->instance + 2 * i, 3, "%02x", r[i]);
    pthread_mutex_init(&sq->lock, NULL);
    return sq;
}

void vf_shared_quota_free(vf_shared_quota *sq)
{
    if (!sq)
        return;
    for (size_t i = 0; i < sq->n_held; i++)
        free(sq->held[i].seq);
    free(sq->held);
    pthread_mutex_destroy(&sq->lock);
    free(sq);
}

static held *find_held(vf_shared_quota *sq, const char *name, bool create)
{
    for (size_t i = 0; i < sq->n_held; i++)
        if (strcmp(sq->held[i].name, name) == 0)
            return &sq->held[i];
    if (!create || strlen(name) > VF_QUOTA_NAME_MAX)
        return NULL;
    if (sq->n_held == sq->cap_held) {
        size_t next = sq->cap_held ? sq->cap_held * 2 : 8;
        held *grown = realloc(sq->held, next * sizeof *grown);
        if (!grown)
            return NULL;
        sq->held = grown;
        sq->cap_held = next;
    }
    held *h = &sq->held[sq->n_held++];
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    return h;
}

static void member_of(const vf_shared_quota *sq, uint64_t seq, char *out, size_t len)
{
    snprintf(out, len, "%s:%" PRIu64, sq->instance, seq);
}

static void keys_for(const vf_shared_quota *sq, const char *name, char bucket[VF_FLEET_KEY_MAX],
                     char leases[VF_FLEET_KEY_MAX])
{
    const char *parts[2] = { sq->scope, name };
    static const char *const suffixes[2] = { ":bucket", ":inflight" };   /* not ":rate": that was a hash */
    char *out[2] = { bucket, leases };
    vf_fleet_keys(out, 2, vf_state_prefix(sq->st), "q", parts, 2, suffixes);
}

static bool counted(const vf_quota_limits *l)
{
    return l->requests_per_minute || l->max_concurrent;
}

bool vf_shared_quota_prepare(vf_shared_quota *sq, const char *name, const vf_quota_limits *l,
                             vf_shared_quota_call *call)
{
    if (!sq || !name || !l || !counted(l))
        return false;
    pthread_mutex_lock(&sq->lock);
    call->seq = ++sq->next_seq;
    call->leaseless = false;
    pthread_mutex_unlock(&sq->lock);
    call->limits = *l;
    call->slice_tag = NULL;
    snprintf(call->want, sizeof call->want, "0");
    snprintf(call->give, sizeof call->give, "0");
    keys_for(sq, name, call->bucket, call->leases);
    member_of(sq, call->seq, call->member, sizeof call->member);
    snprintf(call->rpm, sizeof call->rpm, "%u", l->requests_per_minute);
    snprintf(call->burst, sizeof call->burst, "%u", l->burst ? l->burst : l->requests_per_minute);
    snprintf(call->conc, sizeof call->conc, "%u", l->max_concurrent);
    snprintf(call->lease, sizeof call->lease, "%u", VF_SHARED_LEASE_MS);
    return true;
}

void vf_shared_quota_leaseless(vf_shared_quota_call *call)
{
    call->leaseless = true;
    snprintf(call->lease, sizeof call->lease, "0");
}

void vf_shared_quota_args(const vf_shared_quota_call *call, const char **keys, const char **args)
{
    keys[0] = call->bucket;
    keys[1] = call->leases;
    args[0] = call->rpm;
    args[1] = call->burst;
    args[2] = call->conc;
    args[3] = call->member;
    args[4] = call->lease;
    args[5] = call->want;
    args[6] = call->give;
}

static bool same_limits(const vf_quota_limits *a, const vf_quota_limits *b)
{
    return a->requests_per_minute == b->requests_per_minute && a->burst == b->burst &&
           a->max_concurrent == b->max_concurrent;
}

void vf_shared_quota_slice_ask(vf_shared_quota *sq, const char *name, const void *tag, vf_shared_quota_call *call,
                               uint64_t now_ms)
{
    unsigned want = 0, give = 0;
    pthread_mutex_lock(&sq->lock);
    held *h = find_held(sq, name, true);
    if (h) {
        h->unlimited = false;   /* counted now: a slice of its own decides */
        if (now_ms >= h->slice_until || h->slice_tag != tag || !same_limits(&h->slice_limits, &call->limits)) {
            give = h->slice;   /* expired or for older limits: back to the fleet */
            h->slice = 0;
        }
        if (h->slice < VF_SLICE_TOKENS / 2)
            want = VF_SLICE_TOKENS - h->slice;
        h->slice_tag = tag;   /* the ask's answer renews or ends the slice of this configuration */
    }
    pthread_mutex_unlock(&sq->lock);
    call->slice_tag = tag;
    snprintf(call->want, sizeof call->want, "%u", want);
    snprintf(call->give, sizeof call->give, "%u", give);
}

void vf_shared_quota_slice_unlimited(vf_shared_quota *sq, const char *name, const void *tag, uint64_t now_ms)
{
    pthread_mutex_lock(&sq->lock);
    held *h = find_held(sq, name, true);
    if (h) {
        h->unlimited = true;
        h->slice = 0;   /* a bucket no longer counted has nothing to give back to */
        h->slice_until = now_ms + VF_SLICE_MS;
        h->slice_tag = tag;
    }
    pthread_mutex_unlock(&sq->lock);
}

bool vf_shared_quota_slice_take(vf_shared_quota *sq, const char *name, const void *tag, uint64_t now_ms)
{
    if (!sq)
        return false;
    pthread_mutex_lock(&sq->lock);
    held *h = find_held(sq, name, false);
    bool live = h && h->slice_tag == tag && now_ms < h->slice_until;
    bool took = live && (h->unlimited || h->slice > 0);
    if (took && !h->unlimited)
        h->slice--;
    pthread_mutex_unlock(&sq->lock);
    return took;
}

void vf_shared_quota_slice_unask(vf_shared_quota *sq, const char *name, const vf_shared_quota_call *call)
{
    unsigned give = (unsigned)strtoul(call->give, NULL, 10);
    if (!call->slice_tag || give == 0)
        return;
    pthread_mutex_lock(&sq->lock);
    held *h = find_held(sq, name, false);
    if (h && h->slice_tag == call->slice_tag)
        h->slice += give;   /* given back with the rest at the next ask */
    pthread_mutex_unlock(&sq->lock);
}

void vf_shared_quota_slice_put_back(vf_shared_quota *sq, const char *name)
{
    pthread_mutex_lock(&sq->lock);
    held *h = find_held(sq, name, false);
    if (h && !h->unlimited)
        h->slice++;   /* given back with the rest when the slice expires */
    pthread_mutex_unlock(&sq->lock);
}

/* Caller holds sq->lock. Every answer to an ask renews the slice (the fleet
 * was calm: tokens granted or not) or ends it (busy: its tokens go back at
 * the next ask). */
static void record_slice(held *h, const vf_shared_quota_call *call, long long granted)
{
    if (!call->slice_tag || h->slice_tag != call->slice_tag)
        return;   /* no ask, or one for a configuration since replaced */
    if (granted < 0) {
        h->slice_until = 0;
        return;
    }
    if (granted > VF_SLICE_TOKENS)
        granted = VF_SLICE_TOKENS;
    h->slice += (unsigned)granted;
    h->slice_until = (uint64_t)vf_now_ms() + VF_SLICE_MS;
    h->slice_limits = call->limits;
}

void vf_shared_quota_decided(vf_shared_quota *sq, const char *name, const vf_quota_limits *l,
                             const vf_shared_quota_call *call, long long code, long long retry,
                             long long granted, vf_quota_verdict *v, unsigned *retry_after_s)
{
    *v = code == 0 ? VF_QUOTA_OK : code == 1 ? VF_QUOTA_CONCURRENCY : VF_QUOTA_RATE;
    *retry_after_s = code == 0 ? 0 : (unsigned)(retry < 1 ? 1 : retry > 3600 ? 3600 : retry);
    bool leased = l->max_concurrent && !call->leaseless;
    if (*v != VF_QUOTA_OK || (!leased && !call->slice_tag))
        return;
    pthread_mutex_lock(&sq->lock);
    held *h = find_held(sq, name, true);
    if (h)
        record_slice(h, call, granted);
    if (!leased) {
        pthread_mutex_unlock(&sq->lock);
        return;
    }
    if (h && h->n == h->cap) {
        size_t next = h->cap ? h->cap * 2 : 8;
        uint64_t *grown = realloc(h->seq, next * sizeof *grown);
        if (grown) {
            h->seq = grown;
            h->cap = next;
        }
    }
    if (h && h->n < h->cap)
        h->seq[h->n++] = call->seq;   /* untracked only on OOM: the lease then expires by itself */
    pthread_mutex_unlock(&sq->lock);
}

int vf_shared_quota_acquire(void *opaque, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                            unsigned *retry_after_s)
{
    vf_shared_quota *sq = opaque;
    if (!sq || !name || !l)
        return 0;
    vf_shared_quota_call call;
    if (!vf_shared_quota_prepare(sq, name, l, &call)) {
        *v = VF_QUOTA_OK;
        *retry_after_s = 0;
        return 1;   /* nothing to count fleet-wide */
    }
    const char *argv[9];
    vf_shared_quota_args(&call, argv, argv + 2);
    redisReply *r = vf_state_eval(sq->st, &acquire_script, 2, 9, argv, NULL);
    if (!r)
        return 0;
    int decided = 0;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 && r->element[0]->type == REDIS_REPLY_INTEGER &&
        r->element[1]->type == REDIS_REPLY_INTEGER) {
        decided = 1;
        vf_shared_quota_decided(sq, name, l, &call, r->element[0]->integer, r->element[1]->integer, 0, v,
                                retry_after_s);
    }
    freeReplyObject(r);
    return decided;
}

void vf_shared_quota_give_back(vf_shared_quota *sq, const vf_shared_quota_call *call)
{
    if (!sq || !call->limits.requests_per_minute)
        return;
    const char *argv[2] = { call->bucket, call->burst };
    vf_state_write_eval(sq->st, &give_script, 1, 2, argv, NULL);
}

void vf_shared_quota_release(void *opaque, const char *name)
{
    vf_shared_quota *sq = opaque;
    if (!sq || !name)
        return;
    pthread_mutex_lock(&sq->lock);
    held *h = find_held(sq, name, false);
    bool have = h && h->n > 0;
    uint64_t seq = have ? h->seq[--h->n] : 0;
    pthread_mutex_unlock(&sq->lock);
    if (!have)
        return;
    char bucket[VF_FLEET_KEY_MAX], leases[VF_FLEET_KEY_MAX], member[48];
    keys_for(sq, name, bucket, leases);
    member_of(sq, seq, member, sizeof member);
    const char *argv[3] = { "ZREM", leases, member };
    vf_state_write(sq->st, 3, argv, NULL);
}
