#include "broker/fleet/fleet_lookup.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/fleet/cache_control.h"
#include "broker/fleet/cache_key.h"
#include "broker/fleet/cache_store.h"
#include "broker/fleet/fleet_admission.h"
#include "broker/fleet/fleet_internal.h"
#include "broker/fleet/lookup_flight.h"
#include "ipc/ipc_frame.h"
#include "policy/host_pattern.h"

#define POLL_MS        5u       /* a fleet follower re-reads the store this often */
#define WAIT_CAP_MS    60000u   /* never wait longer than this for another's fetch */

enum { CACHE_HIT = 0, CACHE_MISS = 1, CACHE_BYPASS = 2 };
static const char *const cache_names[] = { "hit", "miss", "bypass" };

uint64_t vf_fleet_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static json_t *receipt_of(json_t *result)
{
    json_t *content = json_object_get(result, "content");
    size_t i;
    json_t *block;
    json_array_foreach(content, i, block) {
        json_t *r = json_object_get(block, "json");
        if (json_is_object(r))
            return r;
    }
    return NULL;
}

void vf_fleet_mark_receipt(json_t *result, const char *cache, uint64_t fetched_at_ms)
{
    json_t *r = receipt_of(result);
    if (!r)
        return;
    time_t secs = (time_t)(fetched_at_ms / 1000);
    struct tm tm;
    char stamp[40] = "";
    if (gmtime_r(&secs, &tm)) {
        size_t n = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(stamp + n, sizeof stamp - n, ".%03uZ", (unsigned)(fetched_at_ms % 1000));
    }
    json_object_set_new(r, "cache", json_string(cache));
    json_object_set_new(r, "fetched_at", json_string(stamp));
}

static bool succeeded(json_t *result)
{
    const char *status = json_string_value(json_object_get(result, "status"));
    return status && strcmp(status, "success") == 0;
}

static uint64_t wait_budget_ms(const vf_tenant_config *t)
{
    uint64_t ms = (uint64_t)t->timeout_ms * (t->attempt_ceiling ? t->attempt_ceiling : 1) + 1000u;
    return ms < WAIT_CAP_MS ? ms : WAIT_CAP_MS;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Another pod is fetching: poll for its result until its lock goes away. */
static char *await_other_pod(vf_fleet *f, const char *key, const char *lock_key, uint64_t budget_ms,
                             uint64_t *fetched_at, uint64_t *expires_at)
{
    int64_t deadline = vf_now_ms() + (int64_t)budget_ms;
    while (vf_now_ms() < deadline) {
        sleep_ms(POLL_MS);
        char *json = vf_cache_store_get(f->st, key, vf_fleet_wall_ms(), UINT64_MAX, fetched_at, expires_at);
        if (json)
            return json;
        if (!vf_cache_store_locked(f->st, lock_key))
            return vf_cache_store_get(f->st, key, vf_fleet_wall_ms(), UINT64_MAX, fetched_at, expires_at);
    }
    return NULL;
}

/* ---- the lookup --------------------------------------------------------- */

void vf_fleet_count_hit(const vf_broker *b, const vf_tenant_config *t, int64_t started)
{
    vf_metrics_count_cache(b->rt->fleet->metrics, CACHE_HIT);
    vf_metrics_count_lookup(b->rt->metrics, t->name, VF_LOOKUP_SUCCESS);
    vf_metrics_observe_lookup(b->rt->metrics, t->name, (double)(vf_now_ms() - started) / 1000.0);
}

/* A value is stored already marked as a hit (fetch); marking again keeps
 * values from older pods right. */
static json_t *served(const vf_broker *b, const vf_tenant_config *t, char *json, uint64_t fetched_at,
                      int64_t started)
{
    json_t *result = json_loads(json, 0, NULL);
    free(json);
    if (!result)
        return NULL;
    vf_fleet_mark_receipt(result, cache_names[CACHE_HIT], fetched_at);
    vf_fleet_count_hit(b, t, started);
    return result;
}

static char *cached(vf_fleet *f, const vf_tenant_config *t, const char *key, uint64_t max_age_ms,
                    uint64_t *fetched_at)
{
    uint64_t now = vf_fleet_wall_ms();
    return vf_lru_get(f->lru, t->name, key, now, max_age_ms, fetched_at);
}

/* Fetch and store when cacheable; the fleet lock (lock_key, NULL when not
 * held) is dropped in the same trip as the store, or alone. */
static json_t *fetch(vf_fleet *f, const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                     vf_lookup_fn run, const char *key, const char *lock_key, uint64_t *fetched_at)
{
    bool unlocked = false;
    char *cache_control = NULL;
    *fetched_at = vf_fleet_wall_ms();
    json_t *result = run(b, t, req, &cache_control);
    vf_cache_control cc;
    vf_cache_control_parse(cache_control, &cc);
    free(cache_control);
    unsigned ttl = vf_cache_control_ttl(&cc, t->cache.max_ttl_s);
    if (result && ttl > 0 && succeeded(result)) {
        /* Stored as every later reader gets it, so a hit is served as stored
         * (vf_fleet_local_hit); this caller's copy is marked a miss after. */
        vf_fleet_mark_receipt(result, cache_names[CACHE_HIT], *fetched_at);
        char *json = json_dumps(result, JSON_COMPACT);
        if (json) {
            size_t len = strlen(json);
            if (len <= VF_LRU_MAX_VALUE) {
                vf_lru_put(f->lru, t->name, t->cache.max_entries, key, json, len, *fetched_at,
                           *fetched_at + 1000ull * ttl);
                vf_cache_store_put(f->st, key, lock_key, json, len, *fetched_at, ttl);
                unlocked = true;
            }
            free(json);
        }
    }
    if (!unlocked)
        vf_cache_store_unlock(f->st, lock_key);
    return result;
}

/* ---- one round trip before the fetch -------------------------------------
 * A lookup prepared on its thread (vf_fleet_lookup_prepare, before the
 * tenant's quota) lets the quota's store trip carry the cache claim and the
 * circuit reads as well; unprepared, the claim carries the circuit reads. */

typedef struct {
    bool active;
    bool ran;                         /* the quota's trip carried the rest */
    const vf_tenant_config *t;
    const vf_lookup_request *req;
    bool keyed;                       /* cacheable: key and lock_key are set */
    char key[VF_FLEET_KEY_MAX], lock_key[VF_FLEET_KEY_MAX + 8];
    char host[VF_CIRCUIT_HOST_MAX + 1];
    bool has_host;
    char *lru_json;                   /* an in-process hit found ahead */
    bool leaseless;                   /* its tenant quota took no lease: nothing to release */
    uint64_t lru_fetched_at;
    vf_flight *led;                   /* this key's fetcher in this process, until the lookup takes it */
    bool claimed;                     /* claim is the store's answer, until the lookup takes it */
    vf_cache_claim claim;
    char *claim_json;
    uint64_t fetched_at, expires_at;
    vf_fleet_ahead *ahead;            /* its trip, sent before this thread began, until the quota takes it */
} lookup_plan;

static __thread __attribute__((tls_model("initial-exec"))) lookup_plan plan;   /* see state_store.c */

static bool gated(const vf_tenant_config *t)
{
    return t->ordering.strategy == VF_ORDER_HEALTH || t->ordering.skip_unhealthy;
}

static uint64_t max_age_of(const vf_lookup_request *req)
{
    return req->has_max_age ? 1000ull * req->max_age_s : UINT64_MAX;
}

static bool may_read_of(const vf_lookup_request *req)
{
    return !(req->has_max_age && req->max_age_s == 0);
}

/* The circuits this lookup is about to ask about (the first few providers). */
static void ask_circuits(vf_admission *a, const vf_tenant_config *t, const char *host)
{
    if (!gated(t))
        return;
    a->tenant = t->name;
    a->host = host;
    for (size_t i = 0; i < t->n_providers && a->n_providers < VF_CIRCUIT_PEEK_MAX; i++)
        a->providers[a->n_providers++] = t->providers[i].name;
}

/* The cache key of a lookup the cache may serve; false when it never may
 * (the URL does not parse, or the tenant's policy says its host is private). */
static bool key_of(const vf_fleet *f, const vf_tenant_config *t, const vf_lookup_request *req,
                   char key[VF_FLEET_KEY_MAX])
{
    char host[256];
    return vf_cache_url_host(req->url, host, sizeof host) == 0 && !vf_cache_host_private(&t->cache, host) &&
           vf_cache_key(key, vf_state_prefix(f->st), t->name, req->url, req->options_key) == 0;
}

static char *normalised_host(const char *url, char *buf, size_t len)
{
    char raw[256];
    return vf_cache_url_host(url, raw, sizeof raw) == 0 && vf_host_normalize(raw, buf, len) ? buf : NULL;
}

static void plan_build(lookup_plan *p, vf_fleet *f, const vf_tenant_config *t, const vf_lookup_request *req)
{
    memset(p, 0, sizeof *p);
    p->active = true;
    p->t = t;
    p->req = req;
    p->has_host = normalised_host(req->url, p->host, sizeof p->host) != NULL;
    if (!t->cache.enabled || !key_of(f, t, req, p->key))
        return;
    p->keyed = true;
    snprintf(p->lock_key, sizeof p->lock_key, "%s:lock", p->key);
    if (!may_read_of(req))
        return;
    p->lru_json = cached(f, t, p->key, max_age_of(req), &p->lru_fetched_at);
    if (!p->lru_json)
        p->led = vf_flight_lead(f, p->key);
}

/* The trip's question for plan p: its quota call, its claim, its circuits. */
static void admission_of(const lookup_plan *p, const vf_shared_quota_call *call, vf_admission *a)
{
    memset(a, 0, sizeof *a);
    a->quota = call;
    if (p->led) {
        a->key = p->key;
        a->lock_key = p->lock_key;
        a->lock_ms = wait_budget_ms(p->t);
    }
    if (!p->lru_json)
        ask_circuits(a, p->t, p->has_host ? p->host : NULL);
}

/* ---- the trip sent ahead ---------------------------------------------------
 * Built on the server thread before the lookup's own thread exists: the
 * admission script travels while that thread is born, and the thread waits
 * for the verdict in the tenant quota's hook, where the trip made on it
 * would have been, before it does anything else. So the store sees the same
 * script once, and nothing is fetched for a lookup it refuses. */
struct vf_fleet_ahead {
    lookup_plan plan;           /* moves to the lookup's thread */
    vf_quota_limits limits;     /* what the tenant quota's hook is expected to pass */
    vf_shared_quota_call call;
    vf_admission a;
    bool sent;                  /* on its way (a.ticket); else it runs on the lookup's thread */
};

vf_fleet_ahead *vf_fleet_lookup_ahead(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req)
{
    vf_fleet *f = b->rt->fleet;
    if (!f || !f->st)
        return NULL;
    /* As the tenant quota will ask its hook (broker/api/quota.c). */
    vf_quota_limits l = { .max_concurrent = t->quota_concurrent, .requests_per_minute = t->quota_rpm,
                          .concurrent_per_pod = !t->quota_concurrent_set };
    if (l.concurrent_per_pod && l.max_concurrent) {
        if (vf_quota_in_flight(b->rt->quota, t->name) >= l.max_concurrent)
            return NULL;   /* this pod's share is full: refused here, no trip spent on it */
        l.max_concurrent = 0;   /* the share is this pod's; the store counts the rate */
    }
    vf_fleet_ahead *ah = calloc(1, sizeof *ah);
    if (!ah)
        return NULL;
    if (!vf_shared_quota_prepare(f->tenant_q, t->name, &l, &ah->call)) {
        free(ah);
        return NULL;   /* nothing counted fleet-wide: the lookup's thread claims alone */
    }
    ah->limits = l;
    plan_build(&ah->plan, f, t, req);
    if (t->cache.enabled)
        vf_shared_quota_slice_ask(f->tenant_q, t->name, t, &ah->call, (uint64_t)vf_now_ms());
    if (ah->plan.lru_json)
        vf_shared_quota_leaseless(&ah->call);
    admission_of(&ah->plan, &ah->call, &ah->a);
    ah->sent = vf_admission_send(f->st, &ah->a);
    return ah;
}

void vf_fleet_lookup_prepare(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                             vf_fleet_ahead *ahead)
{
    vf_fleet *f = b->rt->fleet;
    if (ahead) {
        plan = ahead->plan;   /* its lock, flight and hit are this thread's now */
        plan.ahead = ahead;
        return;
    }
    if (f && f->st)
        plan_build(&plan, f, t, req);
}

void vf_fleet_lookup_drop(const vf_broker *b, vf_fleet_ahead *ahead)
{
    if (!ahead)
        return;
    vf_fleet_lookup_prepare(b, ahead->plan.t, ahead->plan.req, ahead);
    vf_fleet_plan_end(b->rt->fleet);
}

static void take_claim(vf_fleet *f, const vf_admission *a, int ran)
{
    plan.claimed = true;
    plan.claim = ran != 0 ? VF_CLAIM_LOCKED   /* store down: this pod fetches */
                          : vf_cache_store_claimed(f->st, a->claim_tag, a->claim_value, plan.lock_key,
                                                   vf_fleet_wall_ms(), max_age_of(plan.req), wait_budget_ms(plan.t),
                                                   &plan.claim_json, &plan.fetched_at, &plan.expires_at);
}

static bool same_quota_limits(const vf_quota_limits *a, const vf_quota_limits *b)
{
    return a->requests_per_minute == b->requests_per_minute && a->burst == b->burst &&
           a->max_concurrent == b->max_concurrent;
}

/* A trip sent ahead that no quota decision took (this pod's own share
 * refused the lookup first, or its limits changed in a reload): all it took
 * goes back, its token, its lease and its lock, so it admits nothing. */
static void ahead_undo(vf_fleet *f, vf_fleet_ahead *ah, int ran)
{
    vf_admission *a = &ah->a;
    if (ran == 0 && a->quota_code == 0) {
        vf_quota_verdict v;
        unsigned retry = 0;
        vf_shared_quota_decided(f->tenant_q, plan.t->name, &ah->limits, &ah->call, 0, 0, a->quota_granted, &v,
                                &retry);   /* records its lease and slice, as every admission does */
        if (ah->limits.max_concurrent && !ah->call.leaseless)
            vf_shared_quota_release(f->tenant_q, plan.t->name);
        vf_shared_quota_give_back(f->tenant_q, &ah->call);
        if (a->key && a->claim_tag == 2)
            vf_cache_store_unlock(f->st, plan.lock_key);
    }
    vf_admission_done(a);
}

static void ahead_end(vf_fleet *f)
{
    vf_fleet_ahead *ah = plan.ahead;
    plan.ahead = NULL;
    if (!ah->sent)
        vf_shared_quota_slice_unask(f->tenant_q, plan.t->name, &ah->call);   /* never asked: nothing taken */
    ahead_undo(f, ah, ah->sent ? vf_admission_wait(f->st, &ah->a) : -1);
    free(ah);
}

/* The hook's decision from the trip sent ahead; false when its limits are
 * not the ones asked (it was undone: ask again). */
static bool ahead_quota(vf_fleet *f, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                        unsigned *retry_after_s, int *decided)
{
    vf_fleet_ahead *ah = plan.ahead;
    plan.ahead = NULL;
    vf_admission *a = &ah->a;
    int ran = ah->sent ? vf_admission_wait(f->st, a) : vf_admission_run(f->st, a);
    if (!same_quota_limits(&ah->limits, l)) {
        ahead_undo(f, ah, ran);
        free(ah);
        return false;
    }
    plan.ran = true;
    plan.leaseless = plan.lru_json != NULL;
    *decided = ran == 0;
    if (ran == 0)
        vf_shared_quota_decided(f->tenant_q, name, l, &ah->call, a->quota_code, a->quota_retry, a->quota_granted,
                                v, retry_after_s);
    if (plan.led && (ran != 0 || a->quota_code == 0))
        take_claim(f, a, ran);
    vf_admission_done(a);
    free(ah);
    return true;
}

bool vf_fleet_plan_quota(vf_fleet *f, const char *name, const vf_quota_limits *l, vf_quota_verdict *v,
                         unsigned *retry_after_s, int *decided)
{
    if (!plan.active || plan.ran || strcmp(plan.t->name, name) != 0)
        return false;
    if (plan.ahead && ahead_quota(f, name, l, v, retry_after_s, decided))
        return true;
    vf_shared_quota_call call;
    uint64_t now = (uint64_t)vf_now_ms();
    if (!vf_shared_quota_prepare(f->tenant_q, name, l, &call)) {
        if (plan.t->cache.enabled)
            vf_shared_quota_slice_unlimited(f->tenant_q, name, plan.t, now);
        return false;   /* nothing counted fleet-wide: the claim goes alone */
    }
    if (plan.t->cache.enabled)
        vf_shared_quota_slice_ask(f->tenant_q, name, plan.t, &call, now);   /* for the hits after */
    plan.ran = true;
    if (plan.lru_json) {   /* answered once admitted: no lease, so no release to write after */
        vf_shared_quota_leaseless(&call);
        plan.leaseless = true;
    }
    vf_admission a;
    admission_of(&plan, &call, &a);
    int ran = vf_admission_run(f->st, &a);
    *decided = ran == 0;
    if (ran == 0)
        vf_shared_quota_decided(f->tenant_q, name, l, &call, a.quota_code, a.quota_retry, a.quota_granted, v,
                                retry_after_s);
    if (plan.led && (ran != 0 || a.quota_code == 0))
        take_claim(f, &a, ran);
    vf_admission_done(&a);
    return true;
}

/* A hit admitted ahead from this pod's slice of the fleet quota, on the
 * thread that answers it (the server's): the tenant quota's hook admits it
 * without a trip, and its release gives back nothing. */
typedef struct {
    vf_fleet *f;
    const char *tenant;     /* armed for this tenant's next acquire; NULL = not */
    const char *admitted;   /* the acquire took it: this tenant's next release is a no-op */
} sliced_hit;

static __thread __attribute__((tls_model("initial-exec"))) sliced_hit sliced;

/* An arm no acquire took (a per-pod limit refused the hit first): its token goes back. */
static void sliced_disarm(void)
{
    if (sliced.tenant)
        vf_shared_quota_slice_put_back(sliced.f->tenant_q, sliced.tenant);
    memset(&sliced, 0, sizeof sliced);
}

bool vf_fleet_sliced_acquire(const char *name)
{
    if (!sliced.tenant || strcmp(sliced.tenant, name) != 0)
        return false;
    sliced.admitted = sliced.tenant;
    sliced.tenant = NULL;
    return true;
}

bool vf_fleet_sliced_release(const char *name)
{
    if (!sliced.admitted || strcmp(sliced.admitted, name) != 0)
        return false;
    sliced.admitted = NULL;
    return true;
}

/* With a shared store, off a lookup thread: a hit in this process's cache
 * when this pod's slice of the tenant's fleet quota can admit it. */
static char *sliced_hit_for(vf_fleet *f, const vf_tenant_config *t, const vf_lookup_request *req)
{
    sliced_disarm();
    char key[VF_FLEET_KEY_MAX];
    uint64_t fetched_at = 0, now = (uint64_t)vf_now_ms();
    if (!vf_shared_quota_slice_take(f->tenant_q, t->name, t, now))
        return NULL;
    char *json = key_of(f, t, req, key) ? cached(f, t, key, max_age_of(req), &fetched_at) : NULL;
    if (!json) {
        vf_shared_quota_slice_put_back(f->tenant_q, t->name);
        return NULL;
    }
    sliced.f = f;
    sliced.tenant = t->name;
    return json;
}

char *vf_fleet_ready_hit(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req, size_t *len)
{
    vf_fleet *f = b->rt->fleet;
    char *json = NULL;
    if (plan.active && plan.t == t && plan.req == req) {
        json = plan.lru_json;   /* found ahead: its quota trip carried nothing else */
        plan.lru_json = NULL;
    } else if (f && t->cache.enabled && may_read_of(req)) {
        char key[VF_FLEET_KEY_MAX];
        uint64_t fetched_at = 0;
        if (f->st)
            json = sliced_hit_for(f, t, req);
        else if (key_of(f, t, req, key))
            json = cached(f, t, key, max_age_of(req), &fetched_at);
    }
    if (json)
        *len = strlen(json);
    return json;
}

bool vf_fleet_plan_leaseless(const char *name)
{
    if (!plan.active || !plan.leaseless || strcmp(plan.t->name, name) != 0)
        return false;
    plan.leaseless = false;   /* one release */
    return true;
}

void vf_fleet_plan_end(vf_fleet *f)
{
    if (plan.active) {
        if (plan.ahead)
            ahead_end(f);   /* no quota decision took it */
        if (plan.claimed && plan.claim == VF_CLAIM_LOCKED && plan.keyed)
            vf_cache_store_unlock(f->st, plan.lock_key);   /* refused by the quota: nobody fetches */
        if (plan.led)
            vf_flight_finish(f, plan.led);
        free(plan.claim_json);
        free(plan.lru_json);
        memset(&plan, 0, sizeof plan);
    }
    vf_shared_circuit_peek_clear();
}

/* The fleet's value, or else its fetch lock: from the prepared trip, or one
 * trip now (with the circuit reads). */
static vf_cache_claim claim_for(vf_fleet *f, bool planned, const vf_tenant_config *t, const vf_lookup_request *req,
                                const char *key, const char *lock_key, char **json, uint64_t *fetched_at,
                                uint64_t *expires_at)
{
    if (planned && plan.claimed) {
        plan.claimed = false;
        *json = plan.claim_json;
        plan.claim_json = NULL;
        *fetched_at = plan.fetched_at;
        *expires_at = plan.expires_at;
        return plan.claim;
    }
    char host[VF_CIRCUIT_HOST_MAX + 1];
    vf_admission a = { .key = key, .lock_key = lock_key, .lock_ms = wait_budget_ms(t) };
    ask_circuits(&a, t, normalised_host(req->url, host, sizeof host));
    int ran = vf_admission_run(f->st, &a);
    *json = NULL;
    vf_cache_claim claim = ran != 0 ? VF_CLAIM_LOCKED
                                    : vf_cache_store_claimed(f->st, a.claim_tag, a.claim_value, lock_key,
                                                             vf_fleet_wall_ms(), max_age_of(req), wait_budget_ms(t),
                                                             json, fetched_at, expires_at);
    vf_admission_done(&a);
    return claim;
}

static json_t *cached_lookup(vf_fleet *f, const vf_broker *b, const vf_tenant_config *t,
                             const vf_lookup_request *req, vf_lookup_fn run)
{
    bool planned = plan.active && plan.t == t && plan.req == req;
    int64_t started = vf_now_ms();
    char key[VF_FLEET_KEY_MAX], lock_key[VF_FLEET_KEY_MAX + 8];
    uint64_t fetched_at = 0;
    if (planned ? !plan.keyed : !key_of(f, t, req, key)) {
        /* Never stored, never read: the tenant's policy says this host is private. */
        json_t *result = run(b, t, req, NULL);
        vf_fleet_mark_receipt(result, cache_names[CACHE_BYPASS], vf_fleet_wall_ms());
        vf_metrics_count_cache(f->metrics, CACHE_BYPASS);
        return result;
    }
    if (planned)
        snprintf(key, sizeof key, "%s", plan.key);
    snprintf(lock_key, sizeof lock_key, "%s:lock", key);
    bool may_read = may_read_of(req);
    uint64_t max_age_ms = max_age_of(req);
    uint64_t budget = wait_budget_ms(t);

    if (may_read) {
        char *json = NULL;
        if (planned && plan.lru_json) {
            json = plan.lru_json;
            plan.lru_json = NULL;
            fetched_at = plan.lru_fetched_at;
        } else {
            json = cached(f, t, key, max_age_ms, &fetched_at);
        }
        if (json)
            return served(b, t, json, fetched_at, started);   /* a led flight ends with the plan */
    }
    /* Single-flight: one fetch per key in this process, then one per fleet. */
    vf_flight *led = NULL, *waited = NULL;
    if (planned && plan.led) {
        led = plan.led;
        plan.led = NULL;
    } else if (may_read) {
        waited = vf_flight_join(f, key, budget, &led);
    }
    if (waited) {
        vf_flight_leave(f, waited);
        char *json = cached(f, t, key, max_age_ms, &fetched_at);
        if (json)
            return served(b, t, json, fetched_at, started);
    }
    bool locked = false;
    if (led && f->st) {
        char *json = NULL;
        uint64_t expires_at = 0;
        vf_cache_claim claim = claim_for(f, planned, t, req, key, lock_key, &json, &fetched_at, &expires_at);
        if (claim == VF_CLAIM_BUSY)
            json = await_other_pod(f, key, lock_key, budget, &fetched_at, &expires_at);
        if (json) {   /* kept locally for the rest of its life, marked as hits are served */
            json_t *result = served(b, t, json, fetched_at, started);
            char *marked = result ? json_dumps(result, JSON_COMPACT) : NULL;
            if (marked)
                vf_lru_put(f->lru, t->name, t->cache.max_entries, key, marked, strlen(marked), fetched_at,
                           expires_at);
            free(marked);
            vf_flight_finish(f, led);
            return result;
        }
        locked = claim == VF_CLAIM_LOCKED;
    }
    json_t *result = fetch(f, b, t, req, run, key, locked ? lock_key : NULL, &fetched_at);
    vf_flight_finish(f, led);
    int kind = may_read ? CACHE_MISS : CACHE_BYPASS;
    vf_fleet_mark_receipt(result, cache_names[kind], fetched_at);
    vf_metrics_count_cache(f->metrics, kind);
    return result;
}

json_t *vf_fleet_lookup(const vf_broker *b, const vf_tenant_config *t, const vf_lookup_request *req,
                        vf_lookup_fn run)
{
    vf_fleet *f = b->rt->fleet;
    json_t *result = !f || !t->cache.enabled ? run(b, t, req, NULL) : cached_lookup(f, b, t, req, run);
    if (!plan.active)
        vf_shared_circuit_peek_clear();   /* a prepared lookup's reads go at its end */
    return result;
}
