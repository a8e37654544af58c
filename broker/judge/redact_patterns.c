/* Pattern redaction.
 *
 * Scanning a 5 MiB page once per pattern, or once with a big alternation
 * whose possible first bytes include common letters, is too slow. Instead
 * the 3-byte prefixes that can start a rule ("?to", "bea", "eyJ", "AKI",
 * "://", ...) go into the trigger set of the shared scan (redact_scan.c), a
 * few byte compares pick the single rule that can apply at a candidate, and
 * only that rule's PCRE2 pattern (compiled anchored, with JIT) runs, at that
 * position. The patterns are the authority on what matches; the prefilter
 * only decides where to ask.
 *
 * Every rule that keeps context ("?token=", "Bearer ") uses \K, so each
 * match is exactly the span to replace. No rule except the private-key
 * block crosses a line break, which gives fail-closed a natural chunk: when
 * PCRE2 reports a limit (or any error) at a position, the rest of that line
 * is redacted. Token-shape rules carry a look-behind that fails inside a
 * longer token, so a run like "eyJeyJeyJ..." is not rescanned per trigger. */
#include "broker/judge/redact_patterns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/redact_keys.h"

/* Generous for anchored patterns on real text; reached only by pathological
 * input, which is then redacted rather than passed. */
#define MATCH_LIMIT 1000000u
#define DEPTH_LIMIT 10000u
#define HEAP_LIMIT_KIB 16384u

enum rule {
    R_QUERY,    /* ?key=VALUE &token=VALUE ;sid=VALUE #access_token=VALUE */
    R_BEARER,   /* Bearer TOKEN */
    R_AUTHZ,    /* Authorization: Basic|Bearer|Token CRED (header-style) */
    R_USERINFO, /* scheme://USER:PASS@host */
    R_AWS,      /* AKIA/ASIA access key ids */
    R_GOOGLE,   /* AIza API keys */
    R_GITHUB,   /* ghp_/gho_/ghu_/ghs_/ghr_, github_pat_ */
    R_SLACK,    /* xoxb- xoxp- ... */
    R_JWT,      /* eyJ...eyJ...sig */
    R_STRIPE,   /* sk_live_ rk_live_ sk_test_ rk_test_ */
    R_OPENAI,   /* sk-... */
    R_PEM,      /* -----BEGIN ... PRIVATE KEY----- header; body found in C */
    R_COUNT
};

/* A query value in running text: no delimiter, space, control, quote or
 * bracket (so an inserted "[REDACTED]" is never matched again), and it does
 * not end in sentence punctuation: "see ?code=42." keeps its dot. Runs of
 * value characters (QV_CORE) and of punctuation followed by more value
 * (QV_PUNCT) are taken possessively, so matching never backtracks. */
#define QV_CORE "[^&#;\\s\\x00-\\x1f\\x7f\"'<>`\\[\\].,:!?)}]"
#define QV_PUNCT "[.,:!?)}]"
#define QUERY_VALUE "(?:" QV_CORE "++|" QV_PUNCT "++(?=" QV_CORE "))++"
#define B64TOKEN "[A-Za-z0-9._~+/-]"
/* "contains a digit" within the first 64 characters. The bound keeps every
 * rule linear: an unbounded look-ahead rescans the same long run from each
 * trigger inside it ("=authorization" repeated cost 24 s per MiB). Where a
 * rule also accepts long digit-free values the bound changes nothing. */
#define DIGIT_SOON(cls) "(?=" cls "{0,63}+[0-9])"
#define B64TOKEN_HAS_DIGIT DIGIT_SOON("[A-Za-z._~+/-]")
/* userinfo run: no '@', '/', '?', '#', space, control or quote */
#define UI "[^@/?#\\s\\x00-\\x1f<>\"'`]"

static const char *const rule_source[R_COUNT] = {
    [R_QUERY] = NULL, /* built from vf_redact_sensitive_keys */
    /* A bearer credential must look like one (a digit, or real length), so
     * "the bearer of bad news" and "Bearer bonds" survive. */
    [R_BEARER] = "(?<![A-Za-z0-9_])(?i:bearer)\\h+\\K"
                 "(?:" B64TOKEN_HAS_DIGIT B64TOKEN "{8,}|" B64TOKEN "{24,})=*",
    /* Needs a scheme or a token-looking value, so "Authorization: required."
     * is prose. Digest/AWS4 credentials run to the end of the line. A value
     * is token-looking with a digit in its first 64 characters, or when it
     * is 64+ characters long (so one scan decides; see DIGIT_SOON). */
    [R_AUTHZ] = "(?<![A-Za-z0-9_])(?i:authorization)[\"']?\\h*[:=]\\h*[\"']?(?i:"
                "(?:basic|bearer|token|negotiate|ntlm)\\h+\\K[^\\s\"']+"
                "|(?:digest|aws4-hmac-sha256)\\h+\\K[^\\r\\n\"']+"
                "|\\K(?:" DIGIT_SOON("[A-Za-z._~+/=-]") "|(?=[A-Za-z0-9._~+/=-]{64}))"
                "[A-Za-z0-9._~+/=-]{16,})",
    /* Up to the last '@' before the path (passwords may hold a raw '@'):
     * take "segment@" only while another '@' follows, then the last segment. */
    [R_USERINFO] = "(?<=[A-Za-z0-9])://\\K(?:" UI "*+@(?=" UI "*+@))*+" UI "*+(?=@)",
    [R_AWS] = "(?<![A-Za-z0-9])A[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])",
    [R_GOOGLE] = "(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}",
    [R_GITHUB] = "(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    [R_SLACK] = "(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}",
    [R_JWT] = "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\\.eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*",
    [R_STRIPE] = "(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
    /* A digit, or 32+ characters: "sk-learn-compatible-api" is prose. */
    [R_OPENAI] = "(?<![A-Za-z0-9])sk-(?:" DIGIT_SOON("[A-Za-z_-]") "[A-Za-z0-9_-]{20,}"
                 "|[A-Za-z0-9_-]{32,})",
    [R_PEM] = "-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----",
};

struct vf_pattern_set {
    pcre2_code *re[R_COUNT];
    pcre2_match_context *mctx; /* read-only after construction: shareable */
    vf_trigset starts; /* 3-byte prefixes some rule can start with */
};

static unsigned char flip_case(unsigned char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? c ^ 0x20 : c;
}

/* Registers the trigger lit[0..2]; bit k of `caseless` lets byte k be
 * either case (rules compiled with (?i) must fire on any casing). */
static void mark(vf_pattern_set *p, const char lit[3], unsigned caseless)
{
    for (unsigned v = 0; v < 8; v++) {
        if (v & ~caseless)
            continue;
        unsigned char b[3];
        for (int k = 0; k < 3; k++)
            b[k] = v >> k & 1 ? flip_case((unsigned char)lit[k]) : (unsigned char)lit[k];
        vf_trigset_add(&p->starts, b[0], b[1], b[2]);
    }
}

static void mark_all_triggers(vf_pattern_set *p)
{
    for (const char *d = "?&;#"; *d; d++)
        for (const char *const *k = vf_redact_sensitive_keys; *k; k++)
            mark(p, (char[3]){*d, (*k)[0], (*k)[1]}, 6);
    static const char *const exact[] = {"://", "---", "AKI", "ASI", "AIz", "eyJ", "ghp", "gho", "ghu",
                                        "ghs", "ghr", "git", "xox", "sk_", "sk-", "rk_"};
    for (size_t k = 0; k < sizeof exact / sizeof exact[0]; k++)
        mark(p, exact[k], 0);
    mark(p, "aut", 7);
    mark(p, "bea", 7);
}

static char *query_source(void)
{
    size_t n = 64;
    for (const char *const *k = vf_redact_sensitive_keys; *k; k++)
        n += strlen(*k) + 1;
    n += sizeof QUERY_VALUE;
    char *src = malloc(n);
    if (!src)
        return NULL;
    size_t o = (size_t)snprintf(src, n, "[?&;#](?i:");
    for (const char *const *k = vf_redact_sensitive_keys; *k; k++)
        o += (size_t)snprintf(src + o, n - o, "%s%s", k == vf_redact_sensitive_keys ? "" : "|", *k);
    snprintf(src + o, n - o, ")=\\K" QUERY_VALUE);
    return src;
}

vf_pattern_set *vf_pattern_set_new(char *err, size_t errlen)
{
    vf_pattern_set *p = calloc(1, sizeof *p);
    char *qsrc = query_source();
    if (!p || !qsrc)
        goto oom;
    p->mctx = pcre2_match_context_create(NULL);
    if (!p->mctx)
        goto oom;
    pcre2_set_match_limit(p->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(p->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(p->mctx, HEAP_LIMIT_KIB);
    for (int r = 0; r < R_COUNT; r++) {
        const char *src = r == R_QUERY ? qsrc : rule_source[r];
        int code;
        PCRE2_SIZE off;
        /* NO_START_OPTIMIZE: each pattern runs at one known position, and the
         * start-up search for a required character (the '.' of a JWT) would
         * otherwise scan thousands of bytes ahead on every call. */
        p->re[r] = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED,
                                 PCRE2_ANCHORED | PCRE2_NO_START_OPTIMIZE, &code, &off, NULL);
        if (!p->re[r]) {
            char msg[128];
            pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, sizeof msg);
            if (err && errlen)
                snprintf(err, errlen, "redaction rule %d: %s at offset %zu", r, msg, (size_t)off);
            free(qsrc);
            vf_pattern_set_free(p);
            return NULL;
        }
        /* Without JIT the interpreter gives the same answers, only slower. */
        (void)pcre2_jit_compile(p->re[r], PCRE2_JIT_COMPLETE);
    }
    free(qsrc);
    mark_all_triggers(p);
    return p;
oom:
    if (err && errlen)
        snprintf(err, errlen, "out of memory");
    free(qsrc);
    vf_pattern_set_free(p);
    return NULL;
}

void vf_pattern_set_free(vf_pattern_set *p)
{
    if (!p)
        return;
    for (int r = 0; r < R_COUNT; r++)
        pcre2_code_free(p->re[r]);
    pcre2_match_context_free(p->mctx);
    free(p);
}

void vf_pattern_set_set_match_limit(vf_pattern_set *p, uint32_t limit)
{
    pcre2_set_match_limit(p->mctx, limit);
}

static bool has_at(const unsigned char *t, size_t len, size_t i, const char *lit)
{
    size_t n = strlen(lit);
    return i <= len && len - i >= n && memcmp(t + i, lit, n) == 0;
}

/* ASCII case-insensitive; lit is lowercase. Independent of the locale. */
static bool has_at_ci(const unsigned char *t, size_t len, size_t i, const char *lit)
{
    size_t n = strlen(lit);
    if (i > len || len - i < n)
        return false;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = t[i + k];
        if ((c >= 'A' && c <= 'Z' ? c | 0x20 : c) != (unsigned char)lit[k])
            return false;
    }
    return true;
}

/* The one rule that can start at t[i] (i + 3 <= len), or -1. */
static int rule_at(const unsigned char *t, size_t len, size_t i)
{
    unsigned char c1 = t[i + 1], c2 = t[i + 2];
    switch (t[i]) {
    case '?': case '&': case ';': case '#':
        return R_QUERY;
    case ':':
        return c2 == '/' ? R_USERINFO : -1;
    case '-':
        return has_at(t, len, i, "-----BEGIN ") ? R_PEM : -1;
    case 'A':
        if (c1 == 'K' || c1 == 'S')
            return c2 == 'I' && has_at(t, len, i + 3, "A") ? R_AWS : -1;
        if (c1 == 'I')
            return c2 == 'z' && has_at(t, len, i + 3, "a") ? R_GOOGLE : -1;
        return has_at_ci(t, len, i, "authorization") ? R_AUTHZ : -1;
    case 'a':
        return has_at_ci(t, len, i, "authorization") ? R_AUTHZ : -1;
    case 'b': case 'B':
        return has_at_ci(t, len, i, "bearer") ? R_BEARER : -1;
    case 'e':
        return c2 == 'J' ? R_JWT : -1;
    case 'g':
        if (c1 == 'h')
            return memchr("pousr", c2, 5) && has_at(t, len, i + 3, "_") ? R_GITHUB : -1;
        return has_at(t, len, i, "github_pat_") ? R_GITHUB : -1;
    case 'x':
        return c2 == 'x' ? R_SLACK : -1;
    case 's':
        return c2 == '_' ? R_STRIPE : c2 == '-' ? R_OPENAI : -1;
    case 'r':
        return c2 == '_' ? R_STRIPE : -1;
    }
    return -1;
}

static size_t line_end(const unsigned char *t, size_t len, size_t i)
{
    const unsigned char *nl = memchr(t + i, '\n', len - i);
    return nl ? (size_t)(nl - t) : len;
}

/* End of a private-key block whose header ends at hdr_end: just past the
 * END line's dashes, or the end of the text when there is no END. */
static size_t pem_end(const unsigned char *t, size_t len, size_t hdr_end)
{
    const unsigned char *end = memmem(t + hdr_end, len - hdr_end, "-----END ", 9);
    if (!end)
        return len;
    size_t e = (size_t)(end - t) + 9, stop = line_end(t, len, e);
    const unsigned char *dashes = memmem(t + e, stop - e, "-----", 5);
    return dashes ? (size_t)(dashes - t) + 5 : stop;
}

const vf_trigset *vf_pattern_set_triggers(const vf_pattern_set *p)
{
    return &p->starts;
}

bool vf_pattern_match(const vf_pattern_set *p, const unsigned char *t, size_t len, size_t floor,
                      size_t i, pcre2_match_data *md, size_t *start, size_t *end)
{
    if (len - i < 3)
        return false;
    int r = rule_at(t, len, i);
    if (r < 0)
        return false;
    /* The subject starts at floor (where the last replacement ended), so
     * look-behinds see the "]" of "[REDACTED]" as the output will, not the
     * original bytes that were replaced. */
    int rc = pcre2_match(p->re[r], t + floor, len - floor, i - floor, 0, md, p->mctx);
    if (rc == PCRE2_ERROR_NOMATCH)
        return false;
    if (rc < 0) { /* limit or any other error: fail closed */
        *start = i;
        *end = r == R_PEM ? pem_end(t, len, i) : line_end(t, len, i);
        return true;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    *start = floor + ov[0];
    *end = floor + ov[1];
    if (r == R_PEM)
        *end = pem_end(t, len, *end);
    return *end > *start;
}
