/* The one pass over the text: find candidates with the trigger set, let the
 * configured secrets answer first, then the pattern rules.
 *
 * Secrets win: if a match (of a pattern, or of a shorter secret) would end
 * inside a secret that starts within it (a query value stops at a space the
 * secret contains, say), the replaced span grows to cover the whole secret,
 * so no piece of it is left behind. */
#include "broker/judge/redact_scan.h"

#include <time.h>

#include "broker/judge/redact_patterns.h"
#include "broker/judge/redact_secrets.h"

/* Widen [*start, *end) over every secret form that begins inside it. */
static void cover_secrets(const vf_secret_set *secrets, const vf_trigset *triggers,
                          const unsigned char *t, size_t len, size_t floor, size_t from,
                          vf_b64_run *b64, size_t *start, size_t *end)
{
    for (size_t j = from; (j = vf_trigset_next(triggers, t, j, *end, len)) < *end; j++) {
        size_t s, e;
        if (vf_secret_match(secrets, t, len, j, floor, b64, &s, &e)) {
            if (s < *start)
                *start = s;
            if (e > *end)
                *end = e;
        }
    }
}

/* Candidates between clock reads: a read costs ~20 ns, a candidate more. */
#define CLOCK_EVERY 1024u

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool vf_redact_scan(const vf_secret_set *secrets, const vf_pattern_set *patterns,
                    const vf_trigset *any, const vf_trigset *secret_triggers,
                    const char *in, size_t len, int64_t deadline_ms, bool *over_budget,
                    vf_rbuf *out)
{
    *over_budget = false;
    unsigned until_clock = 1; /* read the clock at the first candidate too */
    const unsigned char *t = (const unsigned char *)in;
    bool have_secrets = vf_secret_set_count(secrets) > 0;
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        return false;
    size_t run = 0; /* start of the text not yet copied to out */
    vf_b64_run b64 = VF_B64_RUN_NONE;
    for (size_t i = run; (i = vf_trigset_next(any, t, i, len, len)) < len;) {
        if (deadline_ms && --until_clock == 0) {
            until_clock = CLOCK_EVERY;
            if (monotonic_ms() > deadline_ms) {
                *over_budget = true;
                pcre2_match_data_free(md);
                return false;
            }
        }
        size_t s, e;
        bool hit = (have_secrets && vf_trigset_has(secret_triggers, t, i, len) &&
                    vf_secret_match(secrets, t, len, i, run, &b64, &s, &e)) ||
                   vf_pattern_match(patterns, t, len, run, i, md, &s, &e);
        if (!hit) {
            i++;
            continue;
        }
        if (have_secrets)
            cover_secrets(secrets, secret_triggers, t, len, run, i + 1, &b64, &s, &e);
        vf_rbuf_put(out, t + run, s - run);
        vf_rbuf_put_redacted(out);
        run = i = e;
    }
    vf_rbuf_put(out, t + run, len - run);
    pcre2_match_data_free(md);
    return true;
}
