/* Fleet-wide admission counters in the shared store, one Lua script per
 * admission so concurrent pods never race: a token bucket (requests per
 * minute, same arithmetic as broker/api/quota.c, on the store's clock) and a
 * set of in-flight leases (concurrency; a lease a crashed pod never released
 * expires after VF_SHARED_LEASE_MS). Used for tenants and provider keys. */
#ifndef VERIFETCH_FLEET_SHARED_QUOTA_H
#define VERIFETCH_FLEET_SHARED_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/api/quota.h"
#include "broker/fleet/fleet_keys.h"
#include "broker/fleet/state_store.h"

#define VF_SHARED_LEASE_MS (15u * 60u * 1000u)

/* A slice: tokens of a tenant's fleet bucket reserved by one pod in a trip
 * it makes anyway, so its in-process cache hits are admitted without a trip
 * (on the server thread). The store grants one only while the bucket is
 * large (at most 1/VF_SLICE_SHARE of what is left) and the fleet's
 * concurrency limit is at most half used, so a small budget (10/min) is
 * always counted token by token. The fleet never admits more than its
 * bucket holds: a slice's tokens leave the bucket when granted; what a pod
 * has not spent when the slice expires goes back at its next trip. A slice
 * lives VF_SLICE_MS from the pod's last trip that found the fleet calm; a
 * trip that finds it busy ends it. So a hit a slice admits sees the fleet's
 * concurrency as of at most VF_SLICE_MS ago; a hit holds no slot, so that
 * only decides whether a hit arriving as the fleet fills up is refused. */
#define VF_SLICE_TOKENS   32u
#define VF_SLICE_SHARE    16    /* plain numbers: the script spells them too */
#define VF_SLICE_MIN_CONC 4
#define VF_SLICE_MS       1000u
#define VF_QUOTA_LUA_NUM_(n) #n
#define VF_QUOTA_LUA_NUM(n)  VF_QUOTA_LUA_NUM_(n)

/* Lua: vf_quota(bucket, leases, rpm, burst, concurrent, member, lease_ms,
 * want, give) returns {verdict, retry_after_s, granted}: verdict 0 ok, 1
 * concurrency, 2 rate; granted = slice tokens taken beyond this admission
 * (0..want), or -1 when the fleet's concurrency is more than half used (no
 * slice now); give = unspent slice tokens returned first. Time is the
 * store's (TIME), so pods with skewed clocks share one bucket correctly.
 * Also used inside the lookup's one-trip admission (fleet_admission.c).
 * The bucket is one string "units at_ms" (GET, then SET with PX: one write
 * where a hash needed HSET and PEXPIRE). */
#define VF_SHARED_QUOTA_LUA \
    "local function vf_quota(kb, kl, rpm, burst, conc, member, lease, want, give)\n" \
    "  local t = redis.call('TIME')\n" \
    "  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n" \
    "  rpm, burst, conc, lease = tonumber(rpm), tonumber(burst), tonumber(conc), tonumber(lease)\n" \
    "  want, give = tonumber(want) or 0, tonumber(give) or 0\n" \
    "  local busy, n = false, 0\n" \
    "  if conc > 0 then\n" \
    /* expired leases (a crashed pod's) matter only at the limit: pruned there */ \
    "    n = redis.call('ZCARD', kl)\n" \
    "    if n >= conc then\n" \
    "      redis.call('ZREMRANGEBYSCORE', kl, '-inf', now)\n" \
    "      n = redis.call('ZCARD', kl)\n" \
    "    end\n" \
    "    busy = n >= conc\n" \
    "  end\n" \
    "  if busy and (rpm == 0 or give == 0) then return {1, 1, 0} end\n" \
    "  local grant = 0\n" \
    "  local calm = conc == 0 or (conc >= " VF_QUOTA_LUA_NUM(VF_SLICE_MIN_CONC) " and n * 2 <= conc)\n" \
    "  if not calm then grant = -1 elseif want > 0 then grant = want end\n" \
    "  if rpm > 0 then\n" \
    "    local unit = 60000\n" \
    "    local cap = burst * unit\n" \
    "    local units, at\n" \
    "    local b = redis.call('GET', kb)\n" \
    "    if b then units, at = string.match(b, '^(%d+) (%d+)$') end\n" \
    "    units, at = tonumber(units), tonumber(at)\n" \
    "    if units == nil or at == nil then units, at = cap, now end\n" \
    "    if now > at then units = math.min(cap, units + (now - at) * rpm) end\n" \
    "    units = math.min(cap, units + give * unit)\n" \
    "    local ttl = math.ceil(cap / rpm) + 60000\n" \
    "    if busy then\n" \
    "      redis.call('SET', kb, string.format('%d %d', units, now), 'PX', ttl)\n" \
    "      return {1, 1, 0}\n" \
    "    end\n" \
    "    if units < unit then\n" \
    "      redis.call('SET', kb, string.format('%d %d', units, now), 'PX', ttl)\n" \
    "      local wait = math.ceil((unit - units) / rpm)\n" \
    "      return {2, math.max(1, math.ceil(wait / 1000)), 0}\n" \
    "    end\n" \
    "    units = units - unit\n" \
    "    if grant > 0 then grant = math.min(grant, math.floor(units / unit / " VF_QUOTA_LUA_NUM(VF_SLICE_SHARE) ")) end\n" \
    "    redis.call('SET', kb, string.format('%d %d', units - math.max(grant, 0) * unit, now), 'PX', ttl)\n" \
    "  end\n" \
    "  if conc > 0 and lease > 0 then\n" \
    "    redis.call('ZADD', kl, now + lease, member)\n" \
    "    redis.call('PEXPIRE', kl, lease)\n" \
    "  end\n" \
    "  return {0, 0, grant}\n" \
    "end\n"
typedef struct vf_shared_quota vf_shared_quota;

/* One acquisition's keys and arguments (the script's 2 keys and 7 args). */
typedef struct {
    uint64_t seq;
    char bucket[VF_FLEET_KEY_MAX], leases[VF_FLEET_KEY_MAX];
    char member[48], rpm[16], burst[16], conc[16], lease[16], want[16], give[16];
    bool leaseless;   /* admits within the concurrency limit without taking a lease */
    vf_quota_limits limits;   /* as asked: a slice granted is for these */
    const void *slice_tag;    /* set by vf_shared_quota_slice_ask; NULL = no slice asked */
} vf_shared_quota_call;

/* scope names the counter family ("tenant", "pkey"); it is hashed into keys. */
vf_shared_quota *vf_shared_quota_new(vf_state *st, const char *scope);
void vf_shared_quota_free(vf_shared_quota *sq);

/* 1: the store decided (*v, and *retry_after_s >= 1 when refused); on
 * VF_QUOTA_OK a lease is held until vf_shared_quota_release. 0: the store is
 * unavailable and nothing was taken (use local state). */
int vf_shared_quota_acquire(void *sq, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                            unsigned *retry_after_s);
/* The pieces of an acquisition run inside another script: prepare (false =
 * nothing to count), args (keys[2], args[7] point into call), then decided
 * with the script's {verdict, retry, granted} (which records the lease and
 * the slice). */
bool vf_shared_quota_prepare(vf_shared_quota *sq, const char *name, const vf_quota_limits *l,
                             vf_shared_quota_call *call);
void vf_shared_quota_args(const vf_shared_quota_call *call, const char **keys, const char **args);
void vf_shared_quota_decided(vf_shared_quota *sq, const char *name, const vf_quota_limits *l,
                             const vf_shared_quota_call *call, long long code, long long retry,
                             long long granted, vf_quota_verdict *v, unsigned *retry_after_s);

/* Sets call to top up name's slice (now_ms monotonic; tag names the
 * configuration, e.g. the tenant's config, so a reload starts afresh): asks
 * for tokens when it runs low, and gives back those of an expired one. */
void vf_shared_quota_slice_ask(vf_shared_quota *sq, const char *name, const void *tag, vf_shared_quota_call *call,
                               uint64_t now_ms);
/* name counts nothing fleet-wide (no rate, no fleet concurrency): its hits
 * are admitted without a trip until now_ms + VF_SLICE_MS. */
void vf_shared_quota_slice_unlimited(vf_shared_quota *sq, const char *name, const void *tag, uint64_t now_ms);
/* Spends one token of name's live slice granted under tag (true), without
 * any trip; false = none: admit through the store. put_back returns a token
 * taken for an admission that did not happen. */
bool vf_shared_quota_slice_take(vf_shared_quota *sq, const char *name, const void *tag, uint64_t now_ms);
void vf_shared_quota_slice_put_back(vf_shared_quota *sq, const char *name);
/* A call that was asked (vf_shared_quota_slice_ask) but never sent: the
 * expired tokens it was to give back are this pod's again, for the next ask. */
void vf_shared_quota_slice_unask(vf_shared_quota *sq, const char *name, const vf_shared_quota_call *call);

/* Sets call to check the concurrency limit without taking a lease (lease
 * ms 0): for a lookup that ends as soon as it is admitted (a hit found ahead
 * in this process), so it needs no release, no write after its answer. */
void vf_shared_quota_leaseless(vf_shared_quota_call *call);

/* The token an admission by call took goes back to its bucket (a deferred
 * write): for one that was admitted by the store but not by this process. */
void vf_shared_quota_give_back(vf_shared_quota *sq, const vf_shared_quota_call *call);

/* Gives back one lease taken for name by this process, if any. */
void vf_shared_quota_release(void *sq, const char *name);

#endif
