/* Redaction of everything the broker lets out: exact values of configured
 * secrets in every encoding they leak in (redact_secrets.c) and patterns
 * for credentials we were not told about (redact_patterns.c), found in one
 * scan (redact_scan.c) in which secrets take precedence. URLs then get a
 * structural pass (redact_url.c). The redactor is immutable once built;
 * each call allocates its own PCRE2 match data, so one redactor serves any
 * number of threads. */
#include "broker/judge/redact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/redact_buf.h"
#include "broker/judge/redact_patterns.h"
#include "broker/judge/redact_scan.h"
#include "broker/judge/redact_secrets.h"
#include "broker/judge/redact_testing.h"
#include "broker/judge/redact_url.h"

struct vf_redactor {
    vf_secret_set *secrets;
    vf_pattern_set *patterns;
    vf_trigset any; /* union of the secrets' and the patterns' triggers */
};

vf_redactor *vf_redactor_new(const char *const *secrets, size_t n_secrets,
                             char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    vf_redactor *r = calloc(1, sizeof *r);
    if (!r) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->secrets = vf_secret_set_new(secrets, n_secrets, err, errlen);
    if (r->secrets)
        r->patterns = vf_pattern_set_new(err, errlen);
    if (!r->patterns) {
        vf_redactor_free(r);
        return NULL;
    }
    r->any = *vf_secret_set_triggers(r->secrets);
    vf_trigset_union(&r->any, vf_pattern_set_triggers(r->patterns));
    return r;
}

void vf_redactor_free(vf_redactor *r)
{
    if (!r)
        return;
    vf_secret_set_free(r->secrets);
    vf_pattern_set_free(r->patterns);
    free(r);
}

void vf_redactor_set_match_limit(vf_redactor *r, uint32_t limit)
{
    vf_pattern_set_set_match_limit(r->patterns, limit);
}

static char *redact(const vf_redactor *r, const char *in, size_t len, bool url, int64_t deadline_ms,
                    size_t *out_len, vf_redact_status *status)
{
    *status = VF_REDACT_NOMEM;
    if (!r)
        return NULL;
    if (!in)
        len = 0;
    vf_rbuf text;
    vf_rbuf_init(&text, len);
    bool over = false;
    if (!vf_redact_scan(r->secrets, r->patterns, &r->any, vf_secret_set_triggers(r->secrets), in,
                        len, deadline_ms, &over, &text)) {
        if (over)
            *status = VF_REDACT_OVER_BUDGET;
        vf_rbuf_free(&text);
        return NULL;
    }
    char *done;
    if (!url) {
        done = vf_rbuf_finish(&text, out_len);
    } else {
        /* After the scan, so a secret containing '&' or '=' is already gone
         * whole before the URL is split into parameters. */
        vf_rbuf structured;
        vf_rbuf_init(&structured, text.len);
        if (!text.failed)
            vf_url_scrub(text.data, text.len, &structured);
        bool failed = text.failed;
        vf_rbuf_free(&text);
        if (failed) {
            vf_rbuf_free(&structured);
            return NULL;
        }
        done = vf_rbuf_finish(&structured, out_len);
    }
    if (done)
        *status = VF_REDACT_OK;
    return done;
}

char *vf_redact_text(const vf_redactor *r, const char *in, size_t len, size_t *out_len)
{
    vf_redact_status st;
    return redact(r, in, len, false, 0, out_len, &st);
}

char *vf_redact_text_by(const vf_redactor *r, const char *in, size_t len, int64_t deadline_ms,
                        size_t *out_len, vf_redact_status *status)
{
    return redact(r, in, len, false, deadline_ms, out_len, status);
}

vf_redact_status vf_redact_text_in_place(const vf_redactor *r, char **text, size_t *len, int64_t deadline_ms)
{
    if (!r)
        return VF_REDACT_NOMEM;
    const char *in = *text ? *text : "";
    size_t n = *text ? *len : 0;
    /* Borrowing: a page with nothing to redact (the usual case) is never
     * copied; the first replacement copies what came before it. */
    vf_rbuf out;
    vf_rbuf_init_borrowing(&out, in, n);
    bool over = false;
    if (!vf_redact_scan(r->secrets, r->patterns, &r->any, vf_secret_set_triggers(r->secrets), in, n,
                        deadline_ms, &over, &out)) {
        vf_rbuf_free(&out);
        return over ? VF_REDACT_OVER_BUDGET : VF_REDACT_NOMEM;
    }
    if (vf_rbuf_is_borrowed(&out) && out.len == n)
        return VF_REDACT_OK;
    size_t red_len = 0;
    char *red = vf_rbuf_finish(&out, &red_len);
    if (!red)
        return VF_REDACT_NOMEM;
    free(*text);
    *text = red;
    *len = red_len;
    return VF_REDACT_OK;
}

char *vf_redact_url(const vf_redactor *r, const char *url)
{
    if (!url)
        url = "";
    vf_redact_status st;
    return redact(r, url, strlen(url), true, 0, NULL, &st);
}
