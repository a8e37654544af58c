/* Shared-store tier of the lookup cache (cache_store.h). A value is
 * "vf1\n<fetched_at ms>\n<expires_at ms>\n<ToolResult JSON>". */
#include "broker/fleet/cache_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_MAGIC "vf1\n"

/* The JSON of a stored value when usable at now for max_age_ms, else NULL. */
static char *parse_value(const char *s, size_t n, uint64_t now, uint64_t max_age_ms, uint64_t *fetched_at,
                         uint64_t *expires_at)
{
    if (n <= 4 || memcmp(s, VALUE_MAGIC, 4) != 0)
        return NULL;
    /* The reply is NUL-terminated by hiredis, so strtoull stops in bounds. */
    char *end = NULL, *end2 = NULL;
    errno = 0;
    unsigned long long at = strtoull(s + 4, &end, 10);
    unsigned long long until = end && *end == '\n' ? strtoull(end + 1, &end2, 10) : 0;
    if (errno != 0 || !end2 || *end2 != '\n' || now >= until || (now >= at && now - at > max_age_ms))
        return NULL;
    *fetched_at = at;
    *expires_at = until;
    return strndup(end2 + 1, n - (size_t)(end2 + 1 - s));
}

char *vf_cache_store_get(vf_state *st, const char *key, uint64_t now, uint64_t max_age_ms, uint64_t *fetched_at,
                         uint64_t *expires_at)
{
    if (!st)
        return NULL;
    const char *argv[2] = { "GET", key };
    redisReply *r = vf_state_command(st, 2, argv, NULL);
    char *json = r && r->type == REDIS_REPLY_STRING
                     ? parse_value(r->str, r->len, now, max_age_ms, fetched_at, expires_at) : NULL;
    if (r)
        freeReplyObject(r);
    return json;
}

/* 1 = this pod fetches (lock taken, or no store), 0 = another pod holds it. */
static int take_lock(vf_state *st, const char *lock_key, uint64_t ms)
{
    char px[24];
    snprintf(px, sizeof px, "%" PRIu64, ms);
    const char *argv[6] = { "SET", lock_key, "1", "NX", "PX", px };
    redisReply *r = vf_state_command(st, 6, argv, NULL);
    int mine = !r || r->type == REDIS_REPLY_STATUS;   /* store down: fetch ourselves */
    if (r)
        freeReplyObject(r);
    return mine;
}

vf_cache_claim vf_cache_store_claimed(vf_state *st, long long tag, const redisReply *value, const char *lock_key,
                                      uint64_t now, uint64_t max_age_ms, uint64_t lock_ms, char **json,
                                      uint64_t *fetched_at, uint64_t *expires_at)
{
    *json = NULL;
    if (tag == 0)
        return VF_CLAIM_BUSY;
    if (tag != 1 || !value || value->type != REDIS_REPLY_STRING)
        return VF_CLAIM_LOCKED;
    *json = parse_value(value->str, value->len, now, max_age_ms, fetched_at, expires_at);
    if (*json)
        return VF_CLAIM_HIT;
    /* A value too old for this caller: it needs the lock like a miss (a second, rare trip). */
    return take_lock(st, lock_key, lock_ms) ? VF_CLAIM_LOCKED : VF_CLAIM_BUSY;
}

void vf_cache_store_put(vf_state *st, const char *key, const char *lock_key, const char *json, size_t len,
                        uint64_t fetched_at, unsigned ttl_s)
{
    if (!st)
        return;
    char head[64];
    int hn = snprintf(head, sizeof head, VALUE_MAGIC "%" PRIu64 "\n%" PRIu64 "\n", fetched_at,
                      (uint64_t)(fetched_at + 1000ull * ttl_s));
    char *value = malloc((size_t)hn + len);
    if (!value) {
        vf_cache_store_unlock(st, lock_key);
        return;
    }
    memcpy(value, head, (size_t)hn);
    memcpy(value + hn, json, len);
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%u", ttl_s);
    /* Two plain writes, no script: one connection keeps them in order, so
     * the lock goes only after the value is there. */
    const char *argv[5] = { "SET", key, value, "EX", ttl };
    size_t lens[5] = { 3, strlen(key), (size_t)hn + len, 2, strlen(ttl) };
    vf_state_write(st, 5, argv, lens);
    vf_cache_store_unlock(st, lock_key);
    free(value);
}

void vf_cache_store_unlock(vf_state *st, const char *lock_key)
{
    if (!st || !lock_key)
        return;
    const char *argv[2] = { "DEL", lock_key };
    vf_state_write(st, 2, argv, NULL);
}

bool vf_cache_store_locked(vf_state *st, const char *lock_key)
{
    const char *argv[2] = { "EXISTS", lock_key };
    redisReply *r = vf_state_command(st, 2, argv, NULL);
    bool held = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    if (r)
        freeReplyObject(r);
    return held;
}
