/* Caller -> tenant: bearer tokens (hashed, every entry compared) and unix
 * uids (explicit match, then the catch-all with neither uids nor tokens). */
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "config_fixture.h"
#include "policy/tenant_auth.h"
#include "policy/tenant_auth_testing.h"

TestSuite(tenant_auth, .init = fx_setup, .fini = fx_teardown);

static void token_entry(const char *token, size_t len, char *out)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)token, len, d);
    strcpy(out, "sha256:");
    for (size_t i = 0; i < sizeof d; i++)
        sprintf(out + 7 + 2 * i, "%02x", d[i]);
}

/* fx_load that must succeed. */
#define LOAD(cfg, ...)                                                       \
    do {                                                                     \
        char load_err_[1024];                                                \
        int load_rc_ = fx_load((cfg), load_err_, sizeof load_err_, __VA_ARGS__); \
        cr_assert_eq(load_rc_, 0, "%s", load_err_);                          \
    } while (0)

/* tenants: "alpha" uid 1000 + two tokens, "beta" uid 2000 + one token,
 * "gamma" tokens only (no uids), "rest" the unix catch-all. */
static const char three_tokens[] =
    "tenants = (\n"
    "  { name = \"alpha\"; uids = [ 1000 ]; tokens = [ \"%s\", \"%s\" ]; },\n"
    "  { name = \"beta\"; uids = [ 2000 ]; tokens = [ \"%s\" ]; },\n"
    "  { name = \"gamma\"; tokens = [ \"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD\" ]; },\n"
    "  { name = \"rest\"; }\n"
    ");\n";

static void load_three(vf_config *cfg)
{
    char a1[80], a2[80], b[80];
    token_entry("alpha-token-1-XXXXXXXXXXXXXXXX", 30, a1);
    token_entry("alpha-token-2-XXXXXXXXXXXXXXXX", 30, a2);
    token_entry("beta-token-XXXXXXXXXXXXXXXXXXX", 30, b);
    LOAD(cfg, three_tokens, a1, a2, b);
    cr_assert_eq(cfg->n_tenants, 4);
}

Test(tenant_auth, token_match_and_mismatch)
{
    vf_config cfg;
    load_three(&cfg);
    const vf_tenant_config *alpha = &cfg.tenants[0], *beta = &cfg.tenants[1],
                           *gamma = &cfg.tenants[2];
    cr_assert_eq(vf_tenant_for_token(&cfg, "alpha-token-1-XXXXXXXXXXXXXXXX"), alpha);
    cr_assert_eq(vf_tenant_for_token(&cfg, "alpha-token-2-XXXXXXXXXXXXXXXX"), alpha);
    cr_assert_eq(vf_tenant_for_token(&cfg, "beta-token-XXXXXXXXXXXXXXXXXXX"), beta);
    /* sha256("abc") is the FIPS 180-2 vector: the hash really is SHA-256 of the bytes */
    cr_assert_eq(vf_tenant_for_token(&cfg, "abc"), gamma);

    static const char *const wrong[] = {
        "alpha-token-1-XXXXXXXXXXXXXXX",     /* one byte short */
        "alpha-token-1-XXXXXXXXXXXXXXXXX",   /* one byte long */
        "Alpha-token-1-XXXXXXXXXXXXXXXX",    /* case matters */
        "alpha-token-1-XXXXXXXXXXXXXXXX ",   /* trailing space is part of it */
        "ABC", "abc\n", "",
        /* the stored hash itself is not a token */
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++)
        cr_expect_null(vf_tenant_for_token(&cfg, wrong[i]), "\"%s\" must not match", wrong[i]);
    cr_assert_null(vf_tenant_for_token(&cfg, NULL));
    cr_assert_null(vf_tenant_for_token(NULL, "abc"));
    vf_config_free(&cfg);
}

Test(tenant_auth, documented_sha256sum_command_makes_a_working_entry)
{
    /* packaging/verifetch.conf.example says: printf %s "$TOKEN" | sha256sum */
    static const char token[] = "k9Q-documented-token-7f3a";
    char cmd[256], line[256] = "";
    snprintf(cmd, sizeof cmd, "printf %%s '%s' | sha256sum", token);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(line, sizeof line, p));
    cr_assert_eq(pclose(p), 0);
    cr_assert_gt(strlen(line), 64);
    line[64] = '\0';

    vf_config cfg;
    char err[1024];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "tenants = ( { name = \"cli\"; tokens = [ \"sha256:%s\" ]; } );\n",
                         line), 0, "%s", err);
    cr_assert_eq(vf_tenant_for_token(&cfg, token), &cfg.tenants[0]);
    cr_assert_null(vf_tenant_for_token(&cfg, "k9Q-documented-token-7f3b"));
    vf_config_free(&cfg);
}

Test(tenant_auth, token_length_limits)
{
    char *big = malloc(VF_TOKEN_MAX + 2);
    memset(big, 't', VF_TOKEN_MAX + 1);
    big[VF_TOKEN_MAX + 1] = '\0';
    char at_max[80], over_max[80];
    token_entry(big, VF_TOKEN_MAX, at_max);
    token_entry(big, VF_TOKEN_MAX + 1, over_max);
    vf_config cfg;
    LOAD(&cfg, "tenants = ( { name = \"a\"; tokens = [ \"%s\" ]; }, { name = \"b\"; tokens = [ \"%s\" ]; } );\n",
         at_max, over_max);
    cr_assert_null(vf_tenant_for_token(&cfg, big), "a token over VF_TOKEN_MAX never matches");
    big[VF_TOKEN_MAX] = '\0';
    cr_assert_eq(vf_tenant_for_token(&cfg, big), &cfg.tenants[0], "VF_TOKEN_MAX bytes is still fine");
    vf_config_free(&cfg);
    free(big);
}

/* Structural check of the constant-time design: whichever entry matches (or
 * none), every hash of every tenant is compared. */
Test(tenant_auth, every_hash_is_compared_whatever_matches)
{
    vf_config cfg;
    load_three(&cfg);
    size_t total = 0;
    for (size_t i = 0; i < cfg.n_tenants; i++)
        total += cfg.tenants[i].n_tokens;
    cr_assert_eq(total, 4);

    static const struct { const char *token; int tenant; } cases[] = {
        { "alpha-token-1-XXXXXXXXXXXXXXXX", 0 },   /* the very first entry */
        { "alpha-token-2-XXXXXXXXXXXXXXXX", 0 },
        { "beta-token-XXXXXXXXXXXXXXXXXXX", 1 },
        { "abc", 2 },                              /* the very last entry */
        { "nobody", -1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t comparisons = 12345;
        const vf_tenant_config *t = vf_tenant_for_token_counted(&cfg, cases[i].token, &comparisons);
        cr_expect_eq(comparisons, total, "%s: %zu comparisons, expected %zu", cases[i].token,
                     comparisons, total);
        if (cases[i].tenant < 0)
            cr_expect_null(t, "%s", cases[i].token);
        else
            cr_expect_eq(t, &cfg.tenants[cases[i].tenant], "%s", cases[i].token);
        cr_expect_eq(vf_tenant_for_token(&cfg, cases[i].token), t, "counted and plain agree");
    }
    /* Rejected before hashing: nothing is compared. */
    size_t comparisons = 99;
    cr_assert_null(vf_tenant_for_token_counted(&cfg, "", &comparisons));
    cr_assert_eq(comparisons, 0);
    vf_config_free(&cfg);
}

Test(tenant_auth, uid_mapping_and_catch_all)
{
    vf_config cfg;
    load_three(&cfg);
    cr_assert_eq(vf_tenant_for_uid(&cfg, 1000), &cfg.tenants[0]);
    cr_assert_eq(vf_tenant_for_uid(&cfg, 2000), &cfg.tenants[1], "a tenant with uids and tokens serves both");
    /* gamma (tokens, no uids) comes before rest, yet is not a unix catch-all */
    cr_assert_eq(vf_tenant_for_uid(&cfg, 0), &cfg.tenants[3]);
    cr_assert_eq(vf_tenant_for_uid(&cfg, 3000), &cfg.tenants[3]);
    cr_assert_not(vf_tenant_serves_any_peer(&cfg.tenants[2]));
    cr_assert(vf_tenant_serves_any_peer(&cfg.tenants[3]));
    cr_assert_not(vf_tenant_serves_any_peer(&cfg.tenants[0]));
    cr_assert_not(vf_tenant_serves_any_peer(NULL));
    cr_assert_null(vf_tenant_for_uid(NULL, 1000));
    vf_config_free(&cfg);
}

Test(tenant_auth, no_catch_all_means_unknown_peer_refused)
{
    char a[80];
    token_entry("tcp-only-token-0123456789", 25, a);
    vf_config cfg;
    LOAD(&cfg,
         "tenants = ( { name = \"tcp-only\"; tokens = [ \"%s\" ]; },\n"
         "  { name = \"local\"; uids = [ 1000, 1001 ]; } );\n",
         a);
    cr_assert_null(vf_tenant_for_uid(&cfg, 4242), "a token-only tenant is not a unix catch-all");
    cr_assert_null(vf_tenant_for_uid(&cfg, 0));
    cr_assert_eq(vf_tenant_for_uid(&cfg, 1001), &cfg.tenants[1]);
    cr_assert_eq(vf_tenant_for_token(&cfg, "tcp-only-token-0123456789"), &cfg.tenants[0]);
    cr_assert_null(vf_tenant_for_token(&cfg, "1000"), "uids are not tokens");
    vf_config_free(&cfg);
}

Test(tenant_auth, builtin_default_serves_any_unix_peer_and_no_token)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(vf_config_default(&cfg, err, sizeof err), 0, "%s", err);
    cr_assert_eq(vf_tenant_for_uid(&cfg, 0), &cfg.tenants[0]);
    cr_assert_eq(vf_tenant_for_uid(&cfg, 65534), &cfg.tenants[0]);
    size_t comparisons = 7;
    cr_assert_null(vf_tenant_for_token_counted(&cfg, "anything", &comparisons));
    cr_assert_eq(comparisons, 0);
    vf_config_free(&cfg);
}
