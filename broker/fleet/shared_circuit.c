#include "broker/fleet/shared_circuit.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "broker/fleet/fleet_keys.h"

#define KEYS_PER_SCOPE 4   /* fails, open, tripped, probe */
#define TRIPPED_EXTRA_MS 3600000ull

/* KEYS: per scope fails, open, tripped, probe. ARGV: lease ms, scope count.
 * {1, probe mask} admitted; {0, ms until a probe may go (0 = one is out)}. */
static vf_state_script admit_script = { .source =
    "local n = tonumber(ARGV[2])\n"
    "local need = {}\n"
    "for i = 0, n - 1 do\n"
    "  local b = i * 4\n"
    "  local ttl = redis.call('PTTL', KEYS[b + 2])\n"
    "  if ttl > 0 or ttl == -1 then return {0, math.max(ttl, 1)} end\n"
    "  if redis.call('EXISTS', KEYS[b + 3]) == 1 then\n"
    "    if redis.call('EXISTS', KEYS[b + 4]) == 1 then return {0, 0} end\n"
    "    need[i] = true\n"
    "  end\n"
    "end\n"
    "local mask = 0\n"
    "for i = 0, n - 1 do\n"
    "  if need[i] then\n"
    "    redis.call('SET', KEYS[i * 4 + 4], '1', 'PX', ARGV[1])\n"
    "    mask = mask + (i == 0 and 1 or 2)\n"
    "  end\n"
    "end\n"
    "return {1, mask}\n" };

/* KEYS as above. ARGV: threshold, cooldown ms, tripped ms, scope count, then per
 * scope its verdict (0 ok, 1 failure, 2 none) and whether this pod holds its probe. */
static vf_state_script record_script = { .source =
    "local threshold, cooldown, tripped_ms, n = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])\n"
    "local trs, clear = {}, {}\n"
    "for i = 0, n - 1 do trs[i + 1] = KEYS[i * 4 + 3] end\n"
    /* Mostly no scope is tripped: one EXISTS says so for all. */
    "local any_tripped = redis.call('EXISTS', unpack(trs)) > 0\n"
    "for i = 0, n - 1 do\n"
    "  local f, o, tr, pr = KEYS[i * 4 + 1], KEYS[i * 4 + 2], KEYS[i * 4 + 3], KEYS[i * 4 + 4]\n"
    "  local verdict, held = tonumber(ARGV[5 + i * 2]), tonumber(ARGV[6 + i * 2])\n"
    "  local probing = false\n"   /* tripped and not open: half-open */
    "  if any_tripped and verdict ~= 2 and redis.call('EXISTS', tr) == 1 then\n"
    "    probing = redis.call('EXISTS', o) == 0\n"
    "  end\n"
    "  if verdict == 1 then\n"
    "    local c = redis.call('INCR', f)\n"
    "    redis.call('PEXPIRE', f, 600000)\n"
    "    if c >= threshold or held == 1 or probing then\n"
    "      redis.call('SET', o, '1', 'PX', cooldown)\n"
    "      redis.call('SET', tr, '1', 'PX', tripped_ms)\n"
    "      redis.call('DEL', f)\n"
    "    end\n"
    "    if held == 1 then redis.call('DEL', pr) end\n"
    "  elseif verdict == 0 then\n"
    "    clear[#clear + 1] = f\n"   /* a success ends the run of failures: one DEL for all scopes */
    "    if held == 1 or probing then redis.call('DEL', tr, pr) end\n"
    "  elseif held == 1 then\n"
    "    redis.call('DEL', pr)\n"
    "  end\n"
    "end\n"
    "if #clear > 0 then redis.call('DEL', unpack(clear)) end\n"
    "return 1\n" };

typedef struct {
    char k[2][KEYS_PER_SCOPE][VF_FLEET_KEY_MAX];
    int n;   /* scopes: 1 provider-wide, 2 with the host */
} scope_keys;

static void make_keys(vf_state *st, const char *tenant, const char *provider, const char *host, scope_keys *sk)
{
    static const char *const suffix[KEYS_PER_SCOPE] = { ":fails", ":open", ":tripped", ":probe" };
    const char *parts[3] = { tenant, provider, host };
    sk->n = host ? 2 : 1;
    for (int s = 0; s < sk->n; s++) {
        char *out[KEYS_PER_SCOPE];
        for (int j = 0; j < KEYS_PER_SCOPE; j++)
            out[j] = sk->k[s][j];
        vf_fleet_keys(out, KEYS_PER_SCOPE, vf_state_prefix(st), "c", parts, s == 0 ? 2 : 3, suffix);
    }
}

/* ---- states read ahead (peeks) ------------------------------------------
 * The lookup's admission trip reads the circuits it will ask about; admit
 * answers from that read when it is plain (closed: go; open: refuse), and
 * asks the store only for a half-open circuit, whose probe must be taken
 * atomically. Per thread: one lookup's reads. */

typedef struct {
    const char *tenant, *provider;
    char host[VF_CIRCUIT_HOST_MAX + 1];
    bool has_host;
    long long state[2];   /* per scope: 0 closed, -1 half-open, else ms until it closes */
} peek;

static __thread __attribute__((tls_model("initial-exec"))) struct {   /* see state_store.c */
    unsigned n;
    peek p[VF_CIRCUIT_PEEK_MAX];
} peeks;

int vf_shared_circuit_peek_keys(vf_state *st, const char *tenant, const char *provider, const char *host,
                                char keys[4][VF_FLEET_KEY_MAX])
{
    scope_keys sk;
    make_keys(st, tenant, provider, host, &sk);
    for (int s = 0; s < sk.n; s++) {
        snprintf(keys[s * 2], VF_FLEET_KEY_MAX, "%s", sk.k[s][1]);       /* open */
        snprintf(keys[s * 2 + 1], VF_FLEET_KEY_MAX, "%s", sk.k[s][2]);   /* tripped */
    }
    return sk.n;
}

void vf_shared_circuit_peek_put(const char *tenant, const char *provider, const char *host, const long long *state)
{
    if (peeks.n == VF_CIRCUIT_PEEK_MAX || (host && strlen(host) > VF_CIRCUIT_HOST_MAX))
        return;
    peek *p = &peeks.p[peeks.n++];
    p->tenant = tenant;
    p->provider = provider;
    p->has_host = host != NULL;
    snprintf(p->host, sizeof p->host, "%s", host ? host : "");
    p->state[0] = state[0];
    p->state[1] = host ? state[1] : 0;
}

void vf_shared_circuit_peek_clear(void)
{
    peeks.n = 0;
}

/* 1 admitted, 0 refused (*retry_in_ms), -1 not known from the peeks. */
static int from_peek(const char *tenant, const char *provider, const char *host, uint64_t *retry_in_ms)
{
    for (unsigned i = 0; i < peeks.n; i++) {
        const peek *p = &peeks.p[i];
        if (strcmp(p->tenant, tenant) != 0 || strcmp(p->provider, provider) != 0 || p->has_host != (host != NULL) ||
            (host && strcmp(p->host, host) != 0))
            continue;
        /* Scope by scope, as the admit script decides. */
        for (int s = 0; s < (host ? 2 : 1); s++) {
            if (p->state[s] > 0) {
                *retry_in_ms = (uint64_t)p->state[s];
                return 0;
            }
            if (p->state[s] < 0)
                return -1;   /* half-open: the probe is the store's to give */
        }
        return 1;
    }
    return -1;
}

/* true when this thread's lookup read every scope of (tenant, provider[,
 * host]) closed with nothing tripped. */
static bool peeked_closed(const char *tenant, const char *provider, const char *host)
{
    for (unsigned i = 0; i < peeks.n; i++) {
        const peek *p = &peeks.p[i];
        if (strcmp(p->tenant, tenant) == 0 && strcmp(p->provider, provider) == 0 && p->has_host == (host != NULL) &&
            (!host || strcmp(p->host, host) == 0))
            return p->state[0] == 0 && (!host || p->state[1] == 0);
    }
    return false;
}

static void push_keys(const scope_keys *sk, const char **argv, int *argc)
{
    for (int s = 0; s < sk->n; s++)
        for (int j = 0; j < KEYS_PER_SCOPE; j++)
            argv[(*argc)++] = sk->k[s][j];
}

static int admit(void *ctx, const char *tenant, const char *provider, const char *host,
                 const vf_circuit_params *p, unsigned *probe_mask, uint64_t *retry_in_ms)
{
    vf_state *st = ctx;
    int known = from_peek(tenant, provider, host, retry_in_ms);
    if (known >= 0) {
        *probe_mask = 0;
        return known;
    }
    scope_keys sk;
    make_keys(st, tenant, provider, host, &sk);
    const char *argv[16];
    int argc = 0;
    push_keys(&sk, argv, &argc);
    char lease[24], n[4];
    snprintf(lease, sizeof lease, "%" PRIu64, p->probe_lease_ms ? p->probe_lease_ms : 1);
    snprintf(n, sizeof n, "%d", sk.n);
    argv[argc++] = lease;
    argv[argc++] = n;
    redisReply *r = vf_state_eval(st, &admit_script, sk.n * KEYS_PER_SCOPE, argc, argv, NULL);
    int verdict = -1;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_INTEGER &&
        r->element[1]->type == REDIS_REPLY_INTEGER) {
        verdict = r->element[0]->integer == 1 ? 1 : 0;
        long long v = r->element[1]->integer;
        if (verdict == 1)
            *probe_mask = (unsigned)(v & 3);
        else
            *retry_in_ms = v > 0 ? (uint64_t)v : 0;
    }
    if (r)
        freeReplyObject(r);
    return verdict;
}

static void record(void *ctx, const char *tenant, const char *provider, const char *host,
                   const vf_circuit_params *p, bool provider_failure, bool content_failure, unsigned probe_mask)
{
    vf_state *st = ctx;
    scope_keys sk;
    make_keys(st, tenant, provider, host, &sk);
    if (!provider_failure && !content_failure && probe_mask == 0 && peeked_closed(tenant, provider, host)) {
        /* A success on circuits read closed, holding no probe, only ends the
         * run of failures: one DEL, no script. (One tripped since by another
         * pod stays so until its probe: this lookup was not that probe.) */
        const char *del[3] = { "DEL", sk.k[0][0], sk.k[1][0] };
        vf_state_write(st, 1 + sk.n, del, NULL);
        return;
    }
    const char *argv[24];
    int argc = 0;
    push_keys(&sk, argv, &argc);
    char threshold[16], cooldown[24], tripped[24], n[4];
    unsigned th = p->failure_threshold ? p->failure_threshold : p->min_samples;
    snprintf(threshold, sizeof threshold, "%u", th ? th : 1);
    snprintf(cooldown, sizeof cooldown, "%" PRIu64, p->cooldown_ms ? p->cooldown_ms : 1);
    snprintf(tripped, sizeof tripped, "%" PRIu64, (uint64_t)(p->cooldown_ms + p->probe_lease_ms + TRIPPED_EXTRA_MS));
    snprintf(n, sizeof n, "%d", sk.n);
    argv[argc++] = threshold;
    argv[argc++] = cooldown;
    argv[argc++] = tripped;
    argv[argc++] = n;
    /* Provider-wide: transport/http/malformed fail it; unusable content is a working answer.
     * Host scope: only content failures count; a provider failure says nothing about the host. */
    argv[argc++] = provider_failure ? "1" : "0";
    argv[argc++] = probe_mask & 1 ? "1" : "0";
    if (sk.n == 2) {
        argv[argc++] = provider_failure ? "2" : content_failure ? "1" : "0";
        argv[argc++] = probe_mask & 2 ? "1" : "0";
    }
    vf_state_write_eval(st, &record_script, sk.n * KEYS_PER_SCOPE, argc, argv, NULL);
}

static void release(void *ctx, const char *tenant, const char *provider, const char *host, unsigned probe_mask)
{
    vf_state *st = ctx;
    scope_keys sk;
    make_keys(st, tenant, provider, host, &sk);
    const char *argv[3] = { "DEL" };
    int argc = 1;
    for (int s = 0; s < sk.n; s++)
        if (probe_mask & (1u << s))
            argv[argc++] = sk.k[s][3];
    if (argc == 1)
        return;
    vf_state_write(st, argc, argv, NULL);
}

void vf_shared_circuit_ops(vf_state *st, vf_circuit_shared *ops)
{
    memset(ops, 0, sizeof *ops);
    ops->admit = admit;
    ops->record = record;
    ops->release = release;
    ops->ctx = st;
}
