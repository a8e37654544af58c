#include "broker/fleet/fleet_admission.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "broker/fleet/cache_store.h"

/* KEYS: [quota bucket, leases] [value, lock] then open, tripped per circuit scope.
 * ARGV: quota?, claim?, scopes, [7 quota args] [lock ms].
 * Returns {quota verdict, retry, claim tag (-1 none), value or nil, slice granted, peek per scope...}. */
static vf_state_script admission_script = { .source =
    VF_SHARED_QUOTA_LUA VF_CACHE_CLAIM_LUA VF_CIRCUIT_PEEK_LUA
    "local k, a = 1, 4\n"
    "local out = {0, 0, -1, false, 0}\n"
    "if ARGV[1] == '1' then\n"
    "  local q = vf_quota(KEYS[1], KEYS[2], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])\n"
    "  out[1], out[2], out[5] = q[1], q[2], q[3]\n"
    "  if q[1] ~= 0 then return out end\n"
    "  k, a = 3, 11\n"
    "end\n"
    "if ARGV[2] == '1' then\n"
    "  local c = vf_claim(KEYS[k], KEYS[k + 1], ARGV[a])\n"
    "  out[3] = c[1]\n"
    "  if c[2] then out[4] = c[2] end\n"
    "  k = k + 2\n"
    "end\n"
    "local n = tonumber(ARGV[3])\n"
    /* Circuits are mostly closed (none of their keys exist): one EXISTS says so for all. */
    "local any = n > 0 and redis.call('EXISTS', unpack(KEYS, k, k + n * 2 - 1)) > 0\n"
    "for i = 0, n - 1 do\n"
    "  out[6 + i] = any and vf_peek(KEYS[k + i * 2], KEYS[k + i * 2 + 1]) or 0\n"
    "end\n"
    "return out\n" };

#define MAX_ARGV (2 + 2 + 4 * VF_CIRCUIT_PEEK_MAX + 3 + 7 + 1)

static bool integer_at(const redisReply *r, size_t i, long long *out)
{
    if (i >= r->elements || r->element[i]->type != REDIS_REPLY_INTEGER)
        return false;
    *out = r->element[i]->integer;
    return true;
}

/* The script's keys and arguments into argv (keys first, *nk of them), with
 * the peek keys in keys (which must live until the script is written). */
static int admission_args(vf_state *st, vf_admission *a, const char **argv, int *nk,
                          char peek_keys[VF_CIRCUIT_PEEK_MAX][4][VF_FLEET_KEY_MAX], char *n_text, size_t n_len,
                          char *px, size_t px_len)
{
    a->quota_code = a->quota_retry = a->quota_granted = 0;
    a->claim_tag = -1;
    a->claim_value = NULL;
    a->reply = NULL;
    int n_scopes = 0;
    const char *quota_args[7];
    if (a->quota)
        vf_shared_quota_args(a->quota, argv, quota_args);
    *nk = a->quota ? 2 : 0;
    if (a->key) {
        argv[(*nk)++] = a->key;
        argv[(*nk)++] = a->lock_key;
    }
    for (unsigned p = 0; p < a->n_providers && p < VF_CIRCUIT_PEEK_MAX; p++) {
        a->scopes[p] = vf_shared_circuit_peek_keys(st, a->tenant, a->providers[p], a->host, peek_keys[p]);
        for (int s = 0; s < a->scopes[p] * 2; s++)
            argv[(*nk)++] = peek_keys[p][s];
        n_scopes += a->scopes[p];
    }
    snprintf(n_text, n_len, "%d", n_scopes);
    snprintf(px, px_len, "%" PRIu64, a->lock_ms);
    int argc = *nk;
    argv[argc++] = a->quota ? "1" : "0";
    argv[argc++] = a->key ? "1" : "0";
    argv[argc++] = n_text;
    for (int i = 0; a->quota && i < 7; i++)
        argv[argc++] = quota_args[i];
    if (a->key)
        argv[argc++] = px;
    return argc;
}

/* The script's reply into a (which keeps it); the peeks for this thread. */
static int admission_parse(vf_admission *a, redisReply *r)
{
    if (!r)
        return -1;
    if (r->type != REDIS_REPLY_ARRAY || !integer_at(r, 0, &a->quota_code) || !integer_at(r, 1, &a->quota_retry) ||
        !integer_at(r, 2, &a->claim_tag) || !integer_at(r, 4, &a->quota_granted)) {
        freeReplyObject(r);
        a->claim_tag = -1;
        return -1;
    }
    a->reply = r;
    if (a->claim_tag == 1)
        a->claim_value = r->element[3];
    size_t at = 5;
    for (unsigned p = 0; p < a->n_providers && p < VF_CIRCUIT_PEEK_MAX && a->quota_code == 0; p++) {
        long long state[2] = { 0, 0 };
        bool ok = true;
        for (int s = 0; s < a->scopes[p]; s++)
            ok = integer_at(r, at++, &state[s]) && ok;
        if (ok)
            vf_shared_circuit_peek_put(a->tenant, a->providers[p], a->host, state);
    }
    return 0;
}

int vf_admission_run(vf_state *st, vf_admission *a)
{
    const char *argv[MAX_ARGV];
    char peek_keys[VF_CIRCUIT_PEEK_MAX][4][VF_FLEET_KEY_MAX], n_text[8], px[24];
    int nk = 0;
    int argc = admission_args(st, a, argv, &nk, peek_keys, n_text, sizeof n_text, px, sizeof px);
    return admission_parse(a, vf_state_eval(st, &admission_script, nk, argc, argv, NULL));
}

bool vf_admission_send(vf_state *st, vf_admission *a)
{
    const char *argv[MAX_ARGV];
    char peek_keys[VF_CIRCUIT_PEEK_MAX][4][VF_FLEET_KEY_MAX], n_text[8], px[24];
    int nk = 0;
    int argc = admission_args(st, a, argv, &nk, peek_keys, n_text, sizeof n_text, px, sizeof px);
    return vf_state_eval_send(st, &admission_script, nk, argc, argv, NULL, &a->ticket);
}

int vf_admission_wait(vf_state *st, vf_admission *a)
{
    bool noscript = false;
    redisReply *r = vf_state_eval_wait(st, &a->ticket, &noscript);
    if (noscript)
        return vf_admission_run(st, a);   /* it did not run: EVALSHA meets NOSCRIPT again, then EVAL */
    return admission_parse(a, r);
}

void vf_admission_done(vf_admission *a)
{
    if (a->reply)
        freeReplyObject(a->reply);
    a->reply = NULL;
    a->claim_value = NULL;
}
