/* Redaction: pattern table (each rule and each prose survivor), configured
 * secrets in every leaked form, fail-closed on PCRE2 limits, URL flavour. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/redact.h"
#include "broker/judge/redact_testing.h"

static vf_redactor *make(const char *const *secrets, size_t n)
{
    char err[256] = "";
    vf_redactor *r = vf_redactor_new(secrets, n, err, sizeof err);
    cr_assert_not_null(r, "vf_redactor_new: %s", err);
    return r;
}

static char *redact(const vf_redactor *r, const char *in)
{
    size_t n = 0;
    char *out = vf_redact_text(r, in, strlen(in), &n);
    cr_assert_not_null(out);
    cr_assert_eq(n, strlen(out), "out_len %zu != strlen %zu", n, strlen(out));
    return out;
}

static size_t count_redacted(const char *s)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, VF_REDACTED)); p += strlen(VF_REDACTED))
        n++;
    return n;
}

/* ---- independent encoders for building leaked forms ---- */

static char *b64(const char *in, size_t n, bool url, bool pad)
{
    const char *abc = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                          : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(n * 4 / 3 + 8), *o = out;
    const unsigned char *s = (const unsigned char *)in;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        *o++ = abc[v >> 18];
        *o++ = abc[(v >> 12) & 63];
        *o++ = abc[(v >> 6) & 63];
        *o++ = abc[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)s[i] << 16;
        *o++ = abc[v >> 18];
        *o++ = abc[(v >> 12) & 63];
        if (pad) {
            *o++ = '=';
            *o++ = '=';
        }
    } else if (n - i == 2) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8;
        *o++ = abc[v >> 18];
        *o++ = abc[(v >> 12) & 63];
        *o++ = abc[(v >> 6) & 63];
        if (pad)
            *o++ = '=';
    }
    *o = '\0';
    return out;
}

/* mode 0: escape all but unreserved, upper hex; 1: lower hex; 2: upper hex,
 * space as '+'; 3: escape every byte */
static char *pct(const char *in, int mode)
{
    char *out = malloc(strlen(in) * 3 + 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        bool unreserved = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                          (*p >= '0' && *p <= '9') || strchr("-._~", *p);
        if (mode == 2 && *p == ' ')
            *o++ = '+';
        else if (unreserved && mode != 3)
            *o++ = (char)*p;
        else
            o += sprintf(o, mode == 1 ? "%%%02x" : "%%%02X", *p);
    }
    *o = '\0';
    return out;
}

/* ---- the pattern table ---- */

typedef struct {
    const char *in, *want;
} row;

#define SAME(s) {s, s}

static const row table[] = {
    /* sensitive query keys, ?k=v &k=v ;k=v #k=v, case-insensitive */
    {"?state=CA", "?state=[REDACTED]"},
    {"https://api.example.com/v1?api_key=abc123&page=2", "https://api.example.com/v1?api_key=[REDACTED]&page=2"},
    {"GET /x?foo=1&access_token=zzz999;sid=77 HTTP/1.1", "GET /x?foo=1&access_token=[REDACTED];sid=[REDACTED] HTTP/1.1"},
    {"?X-Amz-Signature=deadbeef&X-Amz-Credential=AKID%2F2024&X-Amz-Security-Token=FQoG",
     "?X-Amz-Signature=[REDACTED]&X-Amz-Credential=[REDACTED]&X-Amz-Security-Token=[REDACTED]"},
    {"see ?KEY=Secret1 and &Password=hunter2", "see ?KEY=[REDACTED] and &Password=[REDACTED]"},
    {"cb#access_token=tok123&state=xyz&expires_in=3600", "cb#access_token=[REDACTED]&state=[REDACTED]&expires_in=3600"},
    {"see https://x.test/?code=42.", "see https://x.test/?code=[REDACTED]."},
    {"(https://x.test/?client_secret=s3c)", "(https://x.test/?client_secret=[REDACTED])"},
    {"?Ünï=1&token=Zürich1 ok", "?Ünï=1&token=[REDACTED] ok"},
    SAME("?keyboard=qwerty&tokenizer=bpe&codec=h264&statement=1"),
    SAME("Use ?page=2 & sort=asc; code review; state of the art"),
    SAME("?token=&x=1"),
    /* Authorization header-style lines */
    {"Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED]"},
    {"authorization: basic dXNlcjpwYXNz\r\nHost: x", "authorization: basic [REDACTED]\r\nHost: x"},
    {"Proxy-Authorization: Token 0123abcd", "Proxy-Authorization: Token [REDACTED]"},
    {"{\"Authorization\": \"Bearer xyz\"}", "{\"Authorization\": \"Bearer [REDACTED]\"}"},
    {"Authorization: AWS4-HMAC-SHA256 Credential=K/2024, Signature=abc\nnext",
     "Authorization: AWS4-HMAC-SHA256 [REDACTED]\nnext"},
    {"Authorization: 7d1f0a2b9c3e4d5f", "Authorization: [REDACTED]"},
    SAME("Authentication: required."),
    SAME("Authorization: required."),
    SAME("Authorization is granted by the owner."),
    /* bearer tokens */
    {"curl -H 'Bearer 9f8e7d6c5b4a' https://x", "curl -H 'Bearer [REDACTED]' https://x"},
    {"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "Bearer [REDACTED]"},
    SAME("the bearer of bad news"),
    SAME("Bearer bonds are negotiable instruments."),
    SAME("the bearer token is sent in a header"),
    /* URL userinfo */
    {"https://alice:s3cret@db.example.com:5432/app", "https://[REDACTED]@db.example.com:5432/app"},
    {"clone https://x:p@ss@github.com/o/r.git now", "clone https://[REDACTED]@github.com/o/r.git now"},
    {"ftp://anonymous@ftp.example.org/pub", "ftp://[REDACTED]@ftp.example.org/pub"},
    SAME("mail bob@example.com or see https://mastodon.social/@bob and https://[::1]:8080/"),
    SAME("ratio 3:4 and http://example.com/a://b"),
    /* token shapes */
    {"key AKIAIOSFODNN7EXAMPLE used", "key [REDACTED] used"},
    {"AKIAIOSFODNN7EXAMPLE,ASIAIOSFODNN7EXAMPL2", "[REDACTED],[REDACTED]"},
    SAME("ASIAPACIFICREGION2024 summit; ASIA PACIFIC"),
    {"tok ghp_0123456789abcdefghijABCDEFGHIJklmnop!", "tok [REDACTED]!"},
    {"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED]"},
    SAME("the high ghost thought about ghp_short"),
    {"slack xoxb-1234567890-abcdefghij end", "slack [REDACTED] end"},
    {"jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-abc_123 x", "jwt=[REDACTED] x"},
    SAME("eyes eyJ only. eyJ.eyJ."),
    {"k AIzaSyA-1234567890abcdefghijklmnopqrstu", "k [REDACTED]"},
    {"sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_test_abcdefghij12", "[REDACTED] [REDACTED]"},
    {"export OPENAI=sk-proj-abc123def456ghi789jkl", "export OPENAI=[REDACTED]"},
    {"sk-abcdefghijklmnopqrstuvwxyzABCDEFGH", "[REDACTED]"},
    SAME("sk-learn-compatible-api docs"),
    SAME("task-management-system-version-2-beta-preview"),
    /* private-key blocks */
    {"a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq83x==\n-----END RSA PRIVATE KEY-----\nb", "a\n[REDACTED]\nb"},
    {"x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\ntruncated here", "x [REDACTED]"},
    {"k: -----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK----- ok", "k: [REDACTED] ok"},
    SAME("-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----"),
    SAME("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
    /* ordinary prose */
    {"AUTHORIZATION: BEARER abc123def", "AUTHORIZATION: BEARER [REDACTED]"},
    {"x bEaReR 1234567890ab", "x bEaReR [REDACTED]"},
    {"&ApI_KeY=v1&aPi-kEy=v2&APIKEY=v3", "&ApI_KeY=[REDACTED]&aPi-kEy=[REDACTED]&APIKEY=[REDACTED]"},
    SAME("the key to success"),
    SAME("token economy"),
    SAME("a session of parliament"),
    SAME("The state said the code was secret; the password policy needs auth."),
    SAME(""),
};

Test(redact_table, every_rule_and_every_prose_survivor)
{
    vf_redactor *r = make(NULL, 0);
    size_t n = sizeof table / sizeof table[0];
    cr_assert_geq(n, 40);
    for (size_t i = 0; i < n; i++) {
        char *out = redact(r, table[i].in);
        cr_expect_str_eq(out, table[i].want, "row %zu: in  [%s]\n  got  [%s]\n  want [%s]", i,
                         table[i].in, out, table[i].want);
        free(out);
    }
    vf_redactor_free(r);
}

Test(redact_table, redaction_is_idempotent)
{
    vf_redactor *r = make(NULL, 0);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char *once = redact(r, table[i].in);
        char *twice = redact(r, once);
        cr_expect_str_eq(twice, once, "row %zu changes on a second pass", i);
        free(once);
        free(twice);
    }
    vf_redactor_free(r);
}

Test(redact_text, keeps_nul_bytes_and_reports_length)
{
    vf_redactor *r = make(NULL, 0);
    const char in[] = "a\0?token=xyz\0b";
    const char want[] = "a\0?token=[REDACTED]\0b";
    size_t n = 0;
    char *out = vf_redact_text(r, in, sizeof in - 1, &n);
    cr_assert_eq(n, sizeof want - 1);
    cr_assert_eq(memcmp(out, want, n), 0);
    cr_assert_eq(out[n], '\0');
    free(out);
    out = vf_redact_text(r, NULL, 0, &n);
    cr_assert_str_eq(out, "");
    cr_assert_eq(n, 0);
    free(out);
    vf_redactor_free(r);
}

/* ---- configured secrets ---- */

#define SECRET "p@ss w0rd/+=Zx9~Q"

static void expect_scrubbed(const vf_redactor *r, const char *form, const char *label)
{
    char in[1024];
    snprintf(in, sizeof in, "before %s after", form);
    char *out = redact(r, in);
    cr_expect_str_eq(out, "before [REDACTED] after", "%s form [%s] -> [%s]", label, form, out);
    free(out);
}

Test(redact_secrets, raw_and_url_encoded_forms)
{
    const char *secrets[] = {SECRET};
    vf_redactor *r = make(secrets, 1);
    expect_scrubbed(r, SECRET, "raw");
    const char *labels[] = {"pct-upper", "pct-lower", "pct-plus", "pct-all"};
    for (int mode = 0; mode < 4; mode++) {
        char *f = pct(SECRET, mode);
        cr_assert_str_neq(f, SECRET);
        expect_scrubbed(r, f, labels[mode]);
        free(f);
    }
    /* mixed: some encoders leave '/' and '@' alone */
    expect_scrubbed(r, "p@ss%20w0rd/%2b%3DZx9~Q", "pct-mixed");
    vf_redactor_free(r);
}

Test(redact_secrets, base64_forms_standard_and_url_safe_padded_and_not)
{
    const char *secrets[] = {SECRET};
    vf_redactor *r = make(secrets, 1);
    for (int url = 0; url < 2; url++)
        for (int pad = 0; pad < 2; pad++) {
            char *f = b64(SECRET, strlen(SECRET), url, pad);
            expect_scrubbed(r, f, url ? (pad ? "b64url-pad" : "b64url") : (pad ? "b64-pad" : "b64"));
            free(f);
        }
    vf_redactor_free(r);
}

Test(redact_secrets, base64_embedded_at_every_alignment)
{
    const char *secrets[] = {"Zk93-secret-value"};
    vf_redactor *r = make(secrets, 1);
    /* Prefix lengths 2..7 cover all three byte alignments twice; suffixes
     * change the unstable tail. "user:SECRET" is HTTP Basic. */
    const char *prefixes[] = {"u:", "us:", "use:", "user:", "alice:", "admin1:"};
    const char *suffixes[] = {"", ":x", "@host", "xyz"};
    for (size_t p = 0; p < 6; p++)
        for (size_t s = 0; s < 4; s++)
            for (int url = 0; url < 2; url++) {
                char plain[128];
                snprintf(plain, sizeof plain, "%s%s%s", prefixes[p], secrets[0], suffixes[s]);
                char *enc = b64(plain, strlen(plain), url, true);
                char in[256];
                snprintf(in, sizeof in, "Basic %s\ncreds=%s;", enc, enc);
                char *out = redact(r, in);
                cr_expect_str_eq(out, "Basic [REDACTED]\ncreds=[REDACTED];", "plain [%s] b64 [%s] -> [%s]",
                                 plain, enc, out);
                free(out);
                free(enc);
            }
    vf_redactor_free(r);
}

Test(redact_secrets, secret_containing_percent_and_short_secret)
{
    const char *secrets[] = {"100%sure-Key", "abc"};
    vf_redactor *r = make(secrets, 2);
    expect_scrubbed(r, "100%sure-Key", "raw with %");
    expect_scrubbed(r, "100%25sure-Key", "pct with %");
    expect_scrubbed(r, "abc", "short raw");
    expect_scrubbed(r, "YWJj", "short b64");
    /* A short secret's base64 only counts standing alone, not inside a word. */
    char *out = redact(r, "xYWJjx and YWJjZGVm");
    cr_expect_str_eq(out, "xYWJjx and YWJjZGVm");
    free(out);
    vf_redactor_free(r);
}

Test(redact_secrets, no_secret_survives_in_mixed_text)
{
    const char *secrets[] = {SECRET, "k3y-Two_0123456789", NULL, ""};
    vf_redactor *r = make(secrets, 4);
    char *u = pct(secrets[1], 3), *e = b64(SECRET, strlen(SECRET), false, true);
    char in[2048];
    snprintf(in, sizeof in, "<p>%s</p>%s%s|%s and %s.", SECRET, secrets[1], u, e, SECRET);
    char *out = redact(r, in);
    cr_expect_null(strstr(out, SECRET), "%s", out);
    cr_expect_null(strstr(out, secrets[1]), "%s", out);
    cr_expect_null(strstr(out, e), "%s", out);
    cr_expect_eq(count_redacted(out), 5, "%s", out);
    cr_expect_str_eq(out, "<p>[REDACTED]</p>[REDACTED][REDACTED]|[REDACTED] and [REDACTED].");
    free(out);
    free(u);
    free(e);
    vf_redactor_free(r);
}

Test(redact_secrets, a_secret_wins_over_a_pattern_that_would_cut_it)
{
    /* The query value stops at the space; the secret does not. */
    const char *secrets[] = {"open sesame 42"};
    vf_redactor *r = make(secrets, 1);
    char *out = redact(r, "go ?token=open sesame 42 rest");
    cr_expect_str_eq(out, "go ?token=[REDACTED] rest");
    free(out);
    out = vf_redact_url(r, "https://h/?q=open%20sesame%2042&x=1");
    cr_expect_str_eq(out, "https://h/?q=[REDACTED]&x=1");
    free(out);
    vf_redactor_free(r);
    const char *amp[] = {"a=b&c"};
    r = make(amp, 1);
    out = vf_redact_url(r, "https://h/?token=a=b&c&x=1");
    cr_expect_str_eq(out, "https://h/?token=[REDACTED]&x=1");
    free(out);
    vf_redactor_free(r);
    /* overlapping secrets: the first hit must not leave the second's tail */
    const char *overlap[] = {"abcdef12", "ef12XYZW"};
    r = make(overlap, 2);
    out = redact(r, "<abcdef12XYZW>");
    cr_expect_str_eq(out, "<[REDACTED]>");
    free(out);
    vf_redactor_free(r);
}

Test(redact_secrets, tiny_secrets_are_found_everywhere_including_the_last_byte)
{
    const char *secrets[] = {"Q", "zz"};
    vf_redactor *r = make(secrets, 2);
    char *out = redact(r, "Qa zz aQ%51 zQ");
    cr_expect_str_eq(out, "[REDACTED]a [REDACTED] a[REDACTED][REDACTED] z[REDACTED]");
    free(out);
    out = redact(r, "azz");
    cr_expect_str_eq(out, "a[REDACTED]");
    free(out);
    vf_redactor_free(r);
}

Test(redact_secrets, too_long_secret_is_an_error)
{
    char *big = malloc(5000);
    memset(big, 'a', 4999);
    big[4999] = '\0';
    const char *secrets[] = {"ok-secret", big};
    char err[128] = "";
    cr_assert_null(vf_redactor_new(secrets, 2, err, sizeof err));
    cr_assert_str_eq(err, "secret 1 is longer than 4096 bytes");
    free(big);
}

/* The scanner tests four positions per step and pads the last three: a
 * credential must be found at every offset and flush with the end. */
Test(redact_text, found_at_every_offset_and_at_the_very_end)
{
    const char *secrets[] = {"xK9-confidential"};
    vf_redactor *r = make(secrets, 1);
    const char *items[] = {"AKIAIOSFODNN7EXAMPLE", "xK9-confidential", "?sid=1", "eyJa.eyJb.c"};
    for (size_t it = 0; it < 4; it++)
        for (size_t pre = 0; pre < 12; pre++) {
            char in[64], want[64];
            memset(in, ' ', pre);
            snprintf(in + pre, sizeof in - pre, "%s", items[it]);
            memset(want, ' ', pre);
            snprintf(want + pre, sizeof want - pre, "%s", it == 2 ? "?sid=[REDACTED]" : "[REDACTED]");
            char *out = redact(r, in);
            cr_expect_str_eq(out, want, "item %zu after %zu spaces", it, pre);
            free(out);
        }
    vf_redactor_free(r);
}

static char *repeat(const char *prefix, const char *unit, size_t total)
{
    size_t pl = strlen(prefix), ul = strlen(unit), o = pl;
    char *b = malloc(total + pl + 1);
    memcpy(b, prefix, pl);
    while (o + ul <= total + pl) {
        memcpy(b + o, unit, ul);
        o += ul;
    }
    b[o] = '\0';
    return b;
}

/* Inputs built to make a regex engine backtrack or work per trigger: each
 * gets its real answer (no rule may need so many steps that it trips the
 * match limit on them), within the test timeout. */
Test(redact_text, pathological_runs_have_defined_results)
{
    vf_redactor *r = make(NULL, 0);
    size_t big = 1u << 20;
    struct {
        const char *prefix, *unit, *want_head;
        size_t want_len; /* 0: output must equal input */
    } cases[] = {
        {"", "eyJ", NULL, 0},                 /* look-behind stops each try at once */
        {"", "bearer ", NULL, 0},             /* no token shape */
        {"", "a://", NULL, 0},                /* no '@' before the next '/' */
        {"see http://", "a", NULL, 0},        /* 1 MiB authority, no '@' */
        {"?token=", ".", NULL, 0},            /* punctuation only: no value */
        {"Bearer ", "a", "Bearer [REDACTED]", 17},
        {"?token=", "x", "?token=[REDACTED]", 17},
        {"-----BEGIN PRIVATE KEY-----\n", "QUJD", "[REDACTED]", 10},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *in = repeat(cases[k].prefix, cases[k].unit, big);
        size_t n;
        char *out = vf_redact_text(r, in, strlen(in), &n);
        cr_assert_not_null(out);
        if (!cases[k].want_head) {
            cr_expect_str_eq(out, in, "case %zu changed", k);
        } else {
            cr_expect_eq(n, cases[k].want_len, "case %zu: length %zu", k, n);
            cr_expect_str_eq(out, cases[k].want_head, "case %zu", k);
        }
        free(out);
        free(in);
    }
    /* Half a million "u@" groups: either the exact answer, or (depending on
     * how the PCRE2 build counts steps) the match limit trips and the line
     * is redacted from the "://" on. Both hide the userinfo. */
    char *in = repeat("https://", "u@", big);
    char *out = redact(r, in);
    cr_expect(strcmp(out, "https://[REDACTED]@") == 0 || strcmp(out, "https[REDACTED]") == 0, "%.40s", out);
    free(out);
    free(in);
    vf_redactor_free(r);
}

/* ---- fail closed ---- */

Test(redact_fail_closed, limit_error_redacts_the_rest_of_the_line)
{
    vf_redactor *r = make(NULL, 0);
    vf_redactor_set_match_limit(r, 1);
    char *out = redact(r, "line one ?token=abc def\nline two is fine");
    cr_expect_str_eq(out, "line one [REDACTED]\nline two is fine");
    free(out);
    /* Text with no candidate position never reaches PCRE2, so it survives. */
    out = redact(r, "plain prose with nothing to look at");
    cr_expect_str_eq(out, "plain prose with nothing to look at");
    free(out);
    /* A private-key header whose check fails still hides the whole block. */
    out = redact(r, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\ntail");
    cr_expect_str_eq(out, "[REDACTED]\ntail");
    free(out);
    vf_redactor_free(r);
}

/* ---- URL flavour ---- */

static const row url_table[] = {
    {"https://user:p%40ss@host.example/path;x?api_key=abc&x=1&Token=t#frag",
     "https://[REDACTED]@host.example/path;x?api_key=[REDACTED]&x=1&Token=[REDACTED]#frag"},
    SAME("https://example.com/a%20b/?q=%E2%9C%93&page=2&keys=1#top"),
    {"https://h/?token=a(b)c\"d<e>&x=1", "https://h/?token=[REDACTED]&x=1"},
    {"https://u:p@ss@host/", "https://[REDACTED]@host/"},
    {"https://h/?%74oken=abc&%53ig=1", "https://h/?%74oken=[REDACTED]&%53ig=[REDACTED]"},
    {"https://h/cb#access_token=abc.&expires_in=3600", "https://h/cb#access_token=[REDACTED]&expires_in=3600"},
    SAME("https://h/?token=&a=1"),
    {"https://h/AKIAIOSFODNN7EXAMPLE/x?state=", "https://h/[REDACTED]/x?state="},
    {"/relative?sig=abc;session=9", "/relative?sig=[REDACTED];session=[REDACTED]"},
    {"//cdn.example/x?code=1", "//cdn.example/x?code=[REDACTED]"},
    SAME("https://@host/?"),
    SAME(""),
};

Test(redact_url, userinfo_and_every_sensitive_value_rest_byte_identical)
{
    vf_redactor *r = make(NULL, 0);
    for (size_t i = 0; i < sizeof url_table / sizeof url_table[0]; i++) {
        char *out = vf_redact_url(r, url_table[i].in);
        cr_assert_not_null(out);
        cr_expect_str_eq(out, url_table[i].want, "url %zu: [%s] -> [%s]", i, url_table[i].in, out);
        free(out);
    }
    char *out = vf_redact_url(r, NULL);
    cr_expect_str_eq(out, "");
    free(out);
    vf_redactor_free(r);
}

Test(redact_url, configured_secret_in_path_and_encoded_in_query)
{
    const char *secrets[] = {"S3cr3t/Key"};
    vf_redactor *r = make(secrets, 1);
    char *out = vf_redact_url(r, "https://api.example/v1/S3cr3t/Key/x?q=S3cr3t%2FKey&page=1");
    cr_expect_str_eq(out, "https://api.example/v1/[REDACTED]/x?q=[REDACTED]&page=1");
    free(out);
    vf_redactor_free(r);
}

/* ---- one redactor, many threads ---- */

static void *worker(void *arg)
{
    const vf_redactor *r = arg;
    for (int i = 0; i < 200; i++) {
        size_t n;
        const char *in = "GET https://a:b@h/?token=T0k3n&x=1 with Bearer abcdef123456 and shh-its-a-secret";
        char *out = vf_redact_text(r, in, strlen(in), &n);
        bool good = out && strcmp(out, "GET https://[REDACTED]@h/?token=[REDACTED]&x=1 with Bearer [REDACTED]"
                                        " and [REDACTED]") == 0;
        free(out);
        if (!good)
            return (void *)1;
    }
    return NULL;
}

Test(redact_threads, shared_redactor_gives_same_answers)
{
    const char *secrets[] = {"shh-its-a-secret"};
    vf_redactor *r = make(secrets, 1);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, worker, r), 0);
    for (int i = 0; i < 4; i++) {
        void *res;
        pthread_join(t[i], &res);
        cr_expect_null(res, "thread %d saw a wrong result", i);
    }
    vf_redactor_free(r);
}

/* ---- issue 13 item 16: evasive spellings of a configured key ---- */

#define KEY16 "sk-Live_9f8e7d6c5b4a"

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80)
        return (size_t)(o[0] = (char)cp, 1);
    if (cp < 0x800)
        return (size_t)(o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2);
    if (cp < 0x10000)
        return (size_t)(o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 63)),
                        o[2] = (char)(0x80 | (cp & 63)), 3);
    o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 63));
    o[2] = (char)(0x80 | (cp >> 6 & 63)), o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* Mathematical bold: letters and digits only; anything else stays. */
static unsigned math_bold(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return 0x1D400 + (unsigned)(c - 'A');
    if (c >= 'a' && c <= 'z')
        return 0x1D41A + (unsigned)(c - 'a');
    if (c >= '0' && c <= '9')
        return 0x1D7CE + (unsigned)(c - '0');
    return c;
}

/* KEY16 spelled character by character: fmt gets the byte (printf forms),
 * or cp_of maps it to a code point written as UTF-8; sep goes between. */
static void spell(char *out, size_t cap, const char *fmt, unsigned (*cp_of)(unsigned char), const char *sep)
{
    static const char key[] = KEY16;
    size_t o = 0;
    for (const char *k = key; *k; k++) {
        if (k != key)
            o += (size_t)snprintf(out + o, cap - o, "%s", sep);
        if (cp_of)
            o += put_utf8(out + o, cp_of((unsigned char)*k));
        else
            o += (size_t)snprintf(out + o, cap - o, fmt, (unsigned char)*k);
    }
    out[o] = '\0';
}

static unsigned fullwidth(unsigned char c)
{
    return c >= 0x21 && c <= 0x7E ? c + 0xFEE0u : c;
}

static unsigned same(unsigned char c)
{
    return c;
}

Test(redact_secrets, evasive_spellings_of_a_configured_key)
{
    const char *secrets[] = {KEY16};
    vf_redactor *r = make(secrets, 1);
    static const struct {
        const char *label, *fmt, *sep;
        unsigned (*cp_of)(unsigned char);
    } forms[] = {
        {"hex lower", "%02x", "", NULL},
        {"hex upper", "%02X", "", NULL},
        {"json \\u", "\\u%04x", "", NULL},
        {"json \\u upper", "\\u%04X", "", NULL},
        {"\\x escapes", "\\x%02x", "", NULL},
        {"decimal entities", "&#%u;", "", NULL},
        {"leading-zero entities", "&#000%u;", "", NULL},
        {"hex entities, no ';'", "&#x%x", "", NULL},
        {"uppercase hex entities", "&#X%02X;", "", NULL},
        {"leading-zero hex entities", "&#x00%X;", "", NULL},
        {"split by newlines", NULL, "\n", same},
        {"split by CRLF", NULL, "\r\n", same},
        {"zero-width spaces", NULL, "\xe2\x80\x8b", same},
        {"soft hyphens and joiners", NULL, "\xc2\xad\xe2\x80\x8d", same},
        {"fullwidth", NULL, "", fullwidth},
        {"mathematical bold", NULL, "", math_bold},
        {"fullwidth with zero-width joiners", NULL, "\xe2\x81\xa0", fullwidth},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char form[1024];
        spell(form, sizeof form, forms[i].fmt, forms[i].cp_of, forms[i].sep);
        expect_scrubbed(r, form, forms[i].label);
    }
    /* mixed spellings in one key, and a named entity for '_' */
    expect_scrubbed(r, "s&#x6B;\\u002dＬive&lowbar;9f%38e7d6c5b4a", "mixed");
    expect_scrubbed(r, "&#xFF53;k-Live_9f8e7d6c5b4a", "entity of a fullwidth letter");
    /* near misses stay: one character differs, or a gap longer than allowed */
    static const char *keep[] = {
        "sk-Live_9f8e7d6c5b4b",
        "&#115;k-Live_9f8e7d6c5b4&#98;",
        "sk-Live_9f8e7d6c5b\n\n\n\n\n\n\n\n\n4a",
        "736b2d4c6976655f3966386537643663356234",
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        char *out = redact(r, keep[i]);
        cr_expect_str_eq(out, keep[i], "near miss [%s] was changed: [%s]", keep[i], out);
        free(out);
    }
    vf_redactor_free(r);
}
