/* Config settings for who may call and what they may do: listen.tcp, tenant
 * tokens, quotas and the egress host lists. Both accepted and rejected forms;
 * rejected ones go through fx_expect_error (file:line, setting path, no secret). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "config_fixture.h"
#include "policy/config.h"

TestSuite(config_access, .init = fx_setup, .fini = fx_teardown);

/* "sha256:<hex of SHA-256(token)>" into out (at least 72 bytes). */
static void token_entry(const char *token, char *out)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)token, strlen(token), d);
    strcpy(out, "sha256:");
    for (size_t i = 0; i < sizeof d; i++)
        sprintf(out + 7 + 2 * i, "%02x", d[i]);
}

/* A tenant "t" with one token (line 4) that the TCP tests below can rely on. */
#define TOKEN_TENANT "tenants = (\n  {\n    name = \"t\";\n    tokens = [ \"%s\" ];\n  }\n);\n"

/* ---- listen.tcp ---- */

static void load_tcp(vf_config *cfg, const char *value)
{
    char entry[80], err[1024];
    token_entry("tcp-test-token", entry);
    int rc = fx_load(cfg, err, sizeof err, "listen = { tcp = \"%s\"; };\n" TOKEN_TENANT, value, entry);
    cr_assert_eq(rc, 0, "listen.tcp = \"%s\": %s", value, err);
}

Test(config_access, tcp_absent_by_default)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "listen = { mode = 0600; };\n"), 0, "%s", err);
    cr_assert_null(cfg.tcp_listen);
    cr_assert_eq(cfg.tcp_addr_len, 0);
    vf_config_free(&cfg);
    cr_assert_eq(vf_config_default(&cfg, err, sizeof err), 0, "%s", err);
    cr_assert_null(cfg.tcp_listen);
    vf_config_free(&cfg);
}

Test(config_access, tcp_loopback_v4_and_v6)
{
    vf_config cfg;
    load_tcp(&cfg, "127.0.0.1:8089");
    cr_assert_str_eq(cfg.tcp_listen, "127.0.0.1:8089");
    const struct sockaddr_in *in = (const struct sockaddr_in *)&cfg.tcp_addr;
    cr_assert_eq(in->sin_family, AF_INET);
    cr_assert_eq(cfg.tcp_addr_len, sizeof(struct sockaddr_in));
    cr_assert_eq(ntohs(in->sin_port), 8089);
    cr_assert_eq(ntohl(in->sin_addr.s_addr), 0x7f000001u);
    vf_config_free(&cfg);

    load_tcp(&cfg, "127.45.6.7:65535");
    in = (const struct sockaddr_in *)&cfg.tcp_addr;
    cr_assert_eq(ntohl(in->sin_addr.s_addr), 0x7f2d0607u, "all of 127/8 is loopback");
    cr_assert_eq(ntohs(in->sin_port), 65535);
    vf_config_free(&cfg);

    load_tcp(&cfg, "[::1]:8089");
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&cfg.tcp_addr;
    cr_assert_eq(in6->sin6_family, AF_INET6);
    cr_assert_eq(cfg.tcp_addr_len, sizeof(struct sockaddr_in6));
    cr_assert_eq(ntohs(in6->sin6_port), 8089);
    cr_assert(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
    vf_config_free(&cfg);

    load_tcp(&cfg, "127.0.0.1:0");
    cr_assert_eq(ntohs(((const struct sockaddr_in *)&cfg.tcp_addr)->sin_port), 0,
                 "port 0 = the kernel picks one");
    vf_config_free(&cfg);
}

Test(config_access, tcp_refuses_other_addresses)
{
    /* why == NULL: a malformed value, reported as "<value>" must be ... + shape */
    static const struct { const char *value, *why, *shape; } cases[] = {
        { "0.0.0.0:8089", "0.0.0.0 is not a loopback address; bearer tokens cross this listener in "
                          "cleartext, so it may only bind 127.0.0.0/8 or [::1]", NULL },
        { "192.168.1.5:8089", "192.168.1.5 is not a loopback address", NULL },
        { "10.0.0.1:80", "10.0.0.1 is not a loopback address", NULL },
        { "[::]:8089", ":: is not a loopback address", NULL },
        { "[::ffff:127.0.0.1]:8089", "::ffff:127.0.0.1 is not a loopback address", NULL },
        { "[fe80::1]:8089", "fe80::1 is not a loopback address", NULL },
        { "localhost:8089", NULL, "an IP address, not a name; IPv6 in brackets" },
        { "[127.0.0.1]:8089", NULL, "an IP address, not a name" },
        { "0177.0.0.1:80", NULL, "an IP address, not a name" },
        { "2130706433:80", NULL, "an IP address, not a name" },
        { ":8089", NULL, "an IP address, not a name" },
        { "127.0.0.1", NULL, "an IP address and a port 0..65535; IPv6 in brackets" },
        { "127.0.0.1:", NULL, "an IP address and a port 0..65535" },
        { "127.0.0.1:65536", NULL, "an IP address and a port 0..65535" },
        { "127.0.0.1:-1", NULL, "an IP address and a port 0..65535" },
        { "127.0.0.1:080", NULL, "an IP address and a port 0..65535" },
        { "127.0.0.1:80x", NULL, "an IP address and a port 0..65535" },
        { "127.0.0.1:123456", NULL, "an IP address and a port 0..65535" },
        { "::1:8089", NULL, "an IP address and a port 0..65535; IPv6 in brackets" },
        { "[::1]8089", NULL, "an IP address and a port 0..65535" },
        { "[::1:8089", NULL, "an IP address and a port 0..65535" },
    };
    char entry[80];
    token_entry("tcp-test-token", entry);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[300];
        if (cases[i].why)
            snprintf(what, sizeof what, "listen.tcp: %s", cases[i].why);
        else
            snprintf(what, sizeof what,
                     "listen.tcp: \"%s\" must be \"127.0.0.1:PORT\" or \"[::1]:PORT\" (%s",
                     cases[i].value, cases[i].shape);
        fx_expect_error(2, what, "listen = {\n  tcp = \"%s\";\n};\n" TOKEN_TENANT, cases[i].value, entry);
    }
    fx_expect_error(2, "listen.tcp: must be a string, not an integer",
                    "listen = {\n  tcp = 8089;\n};\n" TOKEN_TENANT, entry);
}

Test(config_access, tcp_needs_a_tenant_with_tokens)
{
    fx_expect_error(3, "listen.tcp: no tenant has tokens, so every TCP caller would be refused",
                    "listen = {\n  mode = 0600;\n  tcp = \"127.0.0.1:8089\";\n};\n"
                    "tenants = ( { name = \"a\"; uids = [ 1 ]; } );\n");
    fx_expect_error(1, "listen.tcp: no tenant has tokens", "listen = { tcp = \"[::1]:1\"; };\n");
}

/* ---- tokens ---- */

Test(config_access, tokens_are_decoded_hashes)
{
    vf_config cfg;
    char a[80], b[80], err[1024];
    token_entry("first-token", a);
    token_entry("second-token", b);
    /* hex digits in either case; sha256("abc") is the FIPS 180-2 test vector */
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "tenants = ( { name = \"x\"; tokens = [ \"%s\", \"%s\",\n"
                         "  \"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD\" ]; } );\n",
                         a, b),
                 0, "%s", err);
    const vf_tenant_config *t = &cfg.tenants[0];
    cr_assert_eq(t->n_tokens, 3);
    unsigned char want[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)"second-token", 12, want);
    cr_assert_eq(memcmp(t->tokens[1].sha256, want, sizeof want), 0);
    cr_assert_eq(t->tokens[2].sha256[0], 0xba);
    cr_assert_eq(t->tokens[2].sha256[31], 0xad);
    cr_assert_eq(t->n_uids, 0);
    vf_config_free(&cfg);
}

Test(config_access, token_entries_rejected_without_echo)
{
    /* A plaintext token pasted by mistake must never be echoed back. */
    fx_expect_error(4, "tenants[0].tokens[0]: must be \"sha256:\" followed by the token's SHA-256 in hex "
                       "(make it with: printf %s \"$TOKEN\" | sha256sum); plaintext tokens are not accepted",
                    FX_TENANT_WITH("tokens = [ \"" FX_SECRET "\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: must be \"sha256:\" followed",
                    FX_TENANT_WITH("tokens = [ \"SHA256:" FX_SECRET "\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: must be \"sha256:\" followed",
                    FX_TENANT_WITH("tokens = [ \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: has 23 hex digits after \"sha256:\"; a SHA-256 has 64",
                    FX_TENANT_WITH("tokens = [ \"sha256:" FX_SECRET "\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: has 63 hex digits",
                    FX_TENANT_WITH("tokens = [ \"sha256:a7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: has 65 hex digits",
                    FX_TENANT_WITH("tokens = [ \"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0\" ];"));
    /* sha256sum's whole output line pasted in */
    fx_expect_error(4, "tenants[0].tokens[0]: has 67 hex digits",
                    FX_TENANT_WITH("tokens = [ \"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: has a character that is not a hex digit after \"sha256:\"",
                    FX_TENANT_WITH("tokens = [ \"sha256:ga7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: has a character that is not a hex digit",
                    FX_TENANT_WITH("tokens = [ \"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a \" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: is the SHA-256 of an empty token (was $TOKEN unset?)",
                    FX_TENANT_WITH("tokens = [ \"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\" ];"));
    fx_expect_error(4, "tenants[0].tokens[0]: must be \"sha256:\"", FX_TENANT_WITH("tokens = [ \"\" ];"));
    fx_expect_error(4, "tenants[0].tokens[1]: must be a string, not an integer",
                    FX_TENANT_WITH("tokens = ( \"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\", 5 );"));
    fx_expect_error(4, "tenants[0].tokens: must be an array [ ... ] or list ( ... ), not a string",
                    FX_TENANT_WITH("tokens = \"sha256:x\";"));

    /* A long plaintext token: only its length is reported. */
    char long_token[200];
    memset(long_token, 'Q', sizeof long_token - 1);
    long_token[sizeof long_token - 1] = '\0';
    memcpy(long_token + 50, FX_SECRET, strlen(FX_SECRET));
    fx_expect_error(4, "tenants[0].tokens[0]: is 199 bytes long; at most 128 allowed",
                    FX_TENANT_WITH("tokens = [ \"%s\" ];"), long_token);
}

Test(config_access, token_hash_identifies_one_entry)
{
    char a[80], b[80];
    token_entry("dup-token", a);
    token_entry("other-token", b);
    fx_expect_error(5, "tenants[0].tokens[2]: repeats tenants[0].tokens[0]",
                    "tenants = ( { name = \"a\";\n"
                    "  tokens = [\n    \"%s\",\n    \"%s\",\n    \"%s\" ]; } );\n", a, b, a);
    fx_expect_error(6, "tenants[1].tokens[1]: the same token hash is already tenants[0].tokens[1] (tenant \"a\")",
                    "tenants = (\n  { name = \"a\"; tokens = [ \"%s\", \"%s\" ]; },\n"
                    "  { name = \"b\";\n    tokens = [\n      \"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD\",\n"
                    "      \"%s\" ]; }\n);\n",
                    b, a, a);
    /* the same hash in upper and lower case is the same token */
    fx_expect_error(2, "tenants[1].tokens[0]: the same token hash is already tenants[0].tokens[0]",
                    "tenants = ( { name = \"a\"; tokens = [ \"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\" ]; },\n"
                    "{ name = \"b\"; tokens = [ \"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD\" ]; } );\n");
}

Test(config_access, at_most_64_tokens_per_tenant)
{
    char *list = calloc(65, 80);
    size_t used = 0;
    for (int i = 0; i < 65; i++) {
        char token[32], entry[80];
        snprintf(token, sizeof token, "token-%d", i);
        token_entry(token, entry);
        used += (size_t)sprintf(list + used, "%s\"%s\"", i ? ", " : "", entry);
    }
    fx_expect_error(4, "tenants[0].tokens: has 65 entries; at most 64 allowed",
                    FX_TENANT_WITH("tokens = [ %s ];"), list);
    /* 64 is fine */
    *strrchr(list, ',') = '\0';
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, FX_TENANT_WITH("tokens = [ %s ];"), list), 0, "%s", err);
    cr_assert_eq(cfg.tenants[0].n_tokens, 64);
    vf_config_free(&cfg);
    free(list);
}

Test(config_access, catch_all_means_no_uids_and_no_tokens)
{
    char a[80], b[80], err[1024];
    token_entry("token-a", a);
    token_entry("token-b", b);
    vf_config cfg;
    /* Two token-only tenants plus one catch-all: none of them collide. */
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "tenants = ( { name = \"ta\"; tokens = [ \"%s\" ]; },\n"
                         "  { name = \"tb\"; tokens = [ \"%s\" ]; },\n"
                         "  { name = \"any\"; } );\n", a, b),
                 0, "%s", err);
    cr_assert_eq(cfg.n_tenants, 3);
    vf_config_free(&cfg);
    fx_expect_error(3, "tenants[2]: only one tenant may leave uids empty without tokens (tenants[1] \"any\" already serves any peer)",
                    "tenants = ( { name = \"ta\"; tokens = [ \"%s\" ]; },\n  { name = \"any\"; },\n"
                    "  { name = \"more\"; } );\n", a);
}

/* ---- quota ---- */

Test(config_access, quota_values_and_defaults)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "tenants = ( { name = \"a\"; uids = [ 1 ]; quota = { concurrent = 8; requests_per_minute = 120; }; },\n"
                         "  { name = \"b\"; uids = [ 2 ]; quota = { requests_per_minute = 100000; }; },\n"
                         "  { name = \"c\"; uids = [ 3 ]; quota = { concurrent = 0; }; },\n"
                         "  { name = \"d\"; uids = [ 4 ]; quota = { }; },\n"
                         "  { name = \"e\"; uids = [ 5 ]; } );\n"),
                 0, "%s", err);
    /* An absent concurrent among five tenants is a fair share of the default
     * worker.max_concurrent (64 / 5, rounded up); an explicit 0 stays unlimited. */
    static const unsigned want[][2] = { { 8, 120 }, { 13, 100000 }, { 0, 0 }, { 13, 0 }, { 13, 0 } };
    for (size_t i = 0; i < 5; i++) {
        cr_expect_eq(cfg.tenants[i].quota_concurrent, want[i][0], "tenant %zu concurrent", i);
        cr_expect_eq(cfg.tenants[i].quota_rpm, want[i][1], "tenant %zu rpm", i);
    }
    vf_config_free(&cfg);
    cr_assert_eq(vf_config_default(&cfg, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cfg.tenants[0].quota_concurrent + cfg.tenants[0].quota_rpm, 0);
    vf_config_free(&cfg);
}

Test(config_access, quota_ranges_and_types)
{
    fx_expect_error(4, "tenants[0].quota.concurrent: 100001 is out of range (0..100000)",
                    FX_TENANT_WITH("quota = { concurrent = 100001; };"));
    fx_expect_error(4, "tenants[0].quota.requests_per_minute: 100001 is out of range (0..100000)",
                    FX_TENANT_WITH("quota = { requests_per_minute = 100001; };"));
    fx_expect_error(4, "tenants[0].quota.concurrent: -1 is out of range",
                    FX_TENANT_WITH("quota = { concurrent = -1; };"));
    fx_expect_error(4, "tenants[0].quota.requests_per_minute: 5000000000 is out of range",
                    FX_TENANT_WITH("quota = { requests_per_minute = 5000000000L; };"));
    fx_expect_error(4, "tenants[0].quota.concurrent: must be an integer, not a string",
                    FX_TENANT_WITH("quota = { concurrent = \"8\"; };"));
    fx_expect_error(4, "tenants[0].quota.requests_per_minute: must be an integer, not a float",
                    FX_TENANT_WITH("quota = { requests_per_minute = 1.5; };"));
    fx_expect_error(4, "tenants[0].quota: must be a group { ... }, not an integer", FX_TENANT_WITH("quota = 5;"));
    fx_expect_error(4, "tenants[0].quota.burst: unknown setting", FX_TENANT_WITH("quota = { burst = 5; };"));
}

/* ---- egress.allow_hosts / deny_hosts ---- */

Test(config_access, host_lists_normalized)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         FX_TENANT_WITH("egress = { allow_hosts = [ \"*.Internal.Example.\", \"db-1.corp_x.example\" ];"
                                        " deny_hosts = ( \"*.evil.example\", \"METADATA.google.internal\", \"*.com\" ); };")),
                 0, "%s", err);
    const vf_egress_policy *eg = &cfg.tenants[0].egress;
    cr_assert_eq(eg->n_allow_hosts, 2);
    cr_assert_str_eq(eg->allow_hosts[0], "*.internal.example");
    cr_assert_str_eq(eg->allow_hosts[1], "db-1.corp_x.example");
    cr_assert_eq(eg->n_deny_hosts, 3);
    cr_assert_str_eq(eg->deny_hosts[1], "metadata.google.internal");
    cr_assert_str_eq(eg->deny_hosts[2], "*.com", "a broad deny is fine");
    cr_assert_str_eq(vf_egress_host_check(eg, "x.EVIL.example."), "tenant_deny_host");
    cr_assert(vf_egress_host_allowed_explicitly(eg, "db.internal.example"));
    vf_config_free(&cfg);

    cr_assert_eq(fx_load(&cfg, err, sizeof err, FX_TENANT_WITH("egress = { allow_hosts = [ ]; deny_hosts = [ ]; };")),
                 0, "%s", err);
    cr_assert_eq(cfg.tenants[0].egress.n_allow_hosts + cfg.tenants[0].egress.n_deny_hosts, 0);
    vf_config_free(&cfg);
}

Test(config_access, bad_host_patterns)
{
    char label64[65], long_name[260];
    memset(label64, 'a', 64);
    label64[64] = '\0';
    /* 4 labels of 63 + 3 dots = 255 > 253 */
    snprintf(long_name, sizeof long_name, "%.63s.%.63s.%.63s.%.63s", label64, label64, label64, label64);
    static const struct { const char *pattern, *why; } cases[] = {
        { "*", "may use '*' only as a leading \"*.\" (any subdomain)" },
        { "a.*.example", "may use '*' only as a leading \"*.\"" },
        { "*example.com", "may use '*' only as a leading \"*.\"" },
        { "*.*.example.com", "may use '*' only as a leading \"*.\"" },
        { "*.", "may use '*' only" },
        { "*..", "needs a name after \"*.\"" },
        { "", "must not be empty" },
        { ".", "must not be empty" },
        { "exa mple.com", "may contain only ASCII letters, digits, '-', '_' and '.' (write IDNs in their xn-- form)" },
        { "b\xc3\xbc" "cher.example", "may contain only ASCII letters" },
        { "http://a.example", "may contain only ASCII letters" },
        { "a.example:443", "may contain only ASCII letters" },
        { "a..example", "has an empty label" },
        { ".a.example", "has an empty label" },
        { "a.example..", "has an empty label" },
        { "10.0.0.1", "looks like an IP address; use the egress allow/deny CIDR lists for addresses" },
        { "127.1", "looks like an IP address" },
        { "*.168.1", "looks like an IP address" },
        { "::1", "may contain only ASCII letters" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[300];
        snprintf(what, sizeof what, "tenants[0].egress.deny_hosts[1]: \"%s\" %s", cases[i].pattern, cases[i].why);
        fx_expect_error(4, what, FX_TENANT_WITH("egress = { deny_hosts = [ \"ok.example\", \"%s\" ]; };"),
                        cases[i].pattern);
    }
    char what[400];
    snprintf(what, sizeof what, "tenants[0].egress.allow_hosts[0]: \"x.%s.example\" has a label longer than 63", label64);
    fx_expect_error(4, what, FX_TENANT_WITH("egress = { allow_hosts = [ \"x.%s.example\" ]; };"), label64);
    snprintf(what, sizeof what, "\"%s\" is longer than 253 characters", long_name);
    fx_expect_error(4, what, FX_TENANT_WITH("egress = { allow_hosts = [ \"%s\" ]; };"), long_name);

    fx_expect_error(4, "tenants[0].egress.allow_hosts[0]: \"*.com\" would exempt every name under a top-level domain",
                    FX_TENANT_WITH("egress = { allow_hosts = [ \"*.com\" ]; };"));
    fx_expect_error(4, "tenants[0].egress.allow_hosts[0]: \"*.Internal.\" would exempt every name",
                    FX_TENANT_WITH("egress = { allow_hosts = [ \"*.Internal.\" ]; };"));
    fx_expect_error(4, "tenants[0].egress.deny_hosts: must be an array [ ... ] or list ( ... ), not a string",
                    FX_TENANT_WITH("egress = { deny_hosts = \"evil.example\"; };"));
    fx_expect_error(4, "tenants[0].egress.allow_hosts[0]: must be a string, not an integer",
                    FX_TENANT_WITH("egress = { allow_hosts = [ 5 ]; };"));
}
