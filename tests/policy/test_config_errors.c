/* Config loading that must fail: each message names file:line and the setting
 * path, and never carries a key. fx_expect_error checks all of that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "config_fixture.h"
#include "policy/config.h"

TestSuite(config_err, .init = fx_setup, .fini = fx_teardown);

#define API_FILE_CRED "header = \"X-Key\"; key_file = \"%s\";"
#define API_EP        "https://api.example/v1?u={url}"

/* ---- syntax and structure ---- */

Test(config_err, syntax_error_with_line)
{
    fx_expect_error(3, "syntax error", "listen = {\n  mode = 0600;\n  socket = ;\n};\n");
}

Test(config_err, duplicate_setting_is_a_parse_error)
{
    fx_expect_error(2, "duplicate setting name", "worker = { max_concurrent = 2; };\nworker = { };\n");
}

Test(config_err, unknown_settings_anywhere)
{
    fx_expect_error(2, "listen_port: unknown setting (expected one of: listen, worker, classify, tenants, state)",
                    "listen = { socket = \"/tmp/a.sock\"; };\nlisten_port = 80;\n");
    fx_expect_error(2, "listen.sockets: unknown setting", "listen = {\n  sockets = \"/tmp/a\";\n};\n");
    fx_expect_error(4, "tenants[0].egress.alow: unknown setting (expected one of: allow, deny, allow_hosts, deny_hosts, ports, any_port)",
                    FX_TENANT_WITH("egress = { alow = [ \"127.0.0.1/32\" ]; };"));
    fx_expect_error(4, "tenants[0].quotas: unknown setting", FX_TENANT_WITH("quotas = { };"));
    fx_expect_error(4, "tenants[0].quota.rpm: unknown setting (expected one of: concurrent, requests_per_minute)",
                    FX_TENANT_WITH("quota = { rpm = 5; };"));
    fx_expect_error(2, "listen.tcp_port: unknown setting (expected one of: socket, mode, tcp)",
                    "listen = {\n  tcp_port = 8089;\n};\n");
    fx_expect_error(7, "tenants[0].providers[1].credential.keyfile: unknown setting",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; keyfile = \"/x\";", ""));
    fx_expect_error(8, "tenants[0].providers[1].retries: unknown setting",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";", "retries = 2;"));
    fx_expect_error(8, "tenants[0].providers[1].response.body: unknown setting",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";",
                                    "response = { body = \"/x\"; };"));
    fx_expect_error(1, "classify.markers: unknown setting", "classify = { markers = [ ]; };\n");
}

Test(config_err, wrong_types)
{
    fx_expect_error(4, "tenants[0].timeout_ms: must be an integer, not a string",
                    FX_TENANT_WITH("timeout_ms = \"15000\";"));
    fx_expect_error(4, "tenants[0].attempt_ceiling: must be an integer, not a float",
                    FX_TENANT_WITH("attempt_ceiling = 2.5;"));
    fx_expect_error(4, "tenants[0].egress.any_port: must be a boolean (true or false), not an integer",
                    FX_TENANT_WITH("egress = { any_port = 1; };"));
    fx_expect_error(4, "tenants[0].uids[1]: must be an integer, not a string",
                    FX_TENANT_WITH("uids = ( 1000, \"1001\" );"));
    fx_expect_error(4, "tenants[0].uids: must be an array [ ... ] or list ( ... ), not an integer",
                    FX_TENANT_WITH("uids = 1000;"));
    fx_expect_error(1, "tenants[0].name: must be a string, not an integer", "tenants = ( { name = 5; } );\n");
    fx_expect_error(1, "listen: must be a group { ... }, not a string", "listen = \"/tmp/x\";\n");
    fx_expect_error(1, "tenants: must be an array [ ... ] or list ( ... ), not a group", "tenants = { };\n");
    fx_expect_error(4, "tenants[0].providers[0]: must be a group { ... }, not a string",
                    FX_TENANT_WITH("providers = ( \"direct\" );"));
    fx_expect_error(4, "tenants[0].egress: must be a group { ... }, not an array",
                    FX_TENANT_WITH("egress = [ \"127.0.0.1\" ];"));
    fx_expect_error(2, "worker.path: must be a string, not an integer", "worker = {\n  path = 5;\n};\n");
    fx_expect_error(8, "tenants[0].providers[1].cost: must be a number, not a string",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";", "cost = \"cheap\";"));
    fx_expect_error(4, "tenants[0].egress.allow[0]: must be a string, not an integer",
                    FX_TENANT_WITH("egress = { allow = [ 127 ]; };"));
}

/* ---- ranges ---- */

Test(config_err, out_of_range)
{
    fx_expect_error(4, "tenants[0].attempt_ceiling: 11 is out of range (1..10)", FX_TENANT_WITH("attempt_ceiling = 11;"));
    fx_expect_error(4, "tenants[0].attempt_ceiling: 0 is out of range (1..10)", FX_TENANT_WITH("attempt_ceiling = 0;"));
    fx_expect_error(4, "tenants[0].timeout_ms: 99 is out of range (100..600000)", FX_TENANT_WITH("timeout_ms = 99;"));
    fx_expect_error(4, "tenants[0].timeout_ms: 600001 is out of range", FX_TENANT_WITH("timeout_ms = 600001;"));
    fx_expect_error(4, "tenants[0].max_body_bytes: 1023 is out of range (1024..268435456)",
                    FX_TENANT_WITH("max_body_bytes = 1023;"));
    fx_expect_error(4, "tenants[0].max_body_bytes: 268435457 is out of range",
                    FX_TENANT_WITH("max_body_bytes = 268435457;"));
    fx_expect_error(4, "tenants[0].max_body_bytes: 4294968320 is out of range",
                    FX_TENANT_WITH("max_body_bytes = 4294968320L;"));
    fx_expect_error(4, "tenants[0].egress.ports[1]: 65536 is out of range (1..65535)",
                    FX_TENANT_WITH("egress = { ports = [ 80, 65536 ]; };"));
    fx_expect_error(4, "tenants[0].egress.ports[0]: 0 is out of range (1..65535)",
                    FX_TENANT_WITH("egress = { ports = [ 0 ]; };"));
    fx_expect_error(4, "tenants[0].uids[0]: -1 is out of range", FX_TENANT_WITH("uids = [ -1 ];"));
    fx_expect_error(4, "tenants[0].uids[0]: 4294967295 is out of range", FX_TENANT_WITH("uids = [ 4294967295L ];"));
    fx_expect_error(2, "worker.max_concurrent: 1025 is out of range (1..1024)", "worker = {\n  max_concurrent = 1025;\n};\n");
    fx_expect_error(2, "worker.max_concurrent: 0 is out of range", "worker = {\n  max_concurrent = 0;\n};\n");
    fx_expect_error(2, "worker.zygote_max_workers: -1 is out of range (0..10000000)",
                    "worker = {\n  zygote_max_workers = -1;\n};\n");
    fx_expect_error(2, "worker.zygote_max_workers: 10000001 is out of range",
                    "worker = {\n  zygote_max_workers = 10000001;\n};\n");
    fx_expect_error(2, "worker.zygote_max_age_s: 604801 is out of range (0..604800)",
                    "worker = {\n  zygote_max_age_s = 604801;\n};\n");
    fx_expect_error(2, "worker.subordinate_uid: must be \"auto\" or \"off\"",
                    "worker = {\n  subordinate_uid = \"yes\";\n};\n");
    fx_expect_error(2, "worker.zygote_max_age_s: must be an integer", "worker = {\n  zygote_max_age_s = \"1h\";\n};\n");
    fx_expect_error(2, "listen.mode: must be octal permission bits", "listen = {\n  mode = 0778;\n};\n");
    fx_expect_error(2, "listen.mode: must be octal permission bits", "listen = {\n  mode = 01000;\n};\n");
    fx_expect_error(2, "listen.mode: must be octal permission bits", "listen = {\n  mode = 0x200;\n};\n");
    fx_expect_error(2, "listen.mode: -1 is out of range", "listen = {\n  mode = -1;\n};\n");
    fx_expect_error(8, "tenants[0].providers[1].cost: -1 is out of range",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";", "cost = -1.0;"));
}

Test(config_err, integer_literals_that_libconfig_would_wrap)
{
    fx_expect_error(4, "integer literal 4294968320 does not fit in 32 bits",
                    FX_TENANT_WITH("max_body_bytes = 4294968320;"));
    fx_expect_error(4, "integer literal 3000000000 does not fit in 32 bits",
                    FX_TENANT_WITH("uids = [ 3000000000 ];"));
    fx_expect_error(2, "integer literal 0x100000000 does not fit in 32 bits",
                    "# comment 99999999999\nworker = { max_concurrent = 0x100000000; };\n");
    fx_expect_error(1, "integer literal 99999999999999999999 does not fit in 64 bits",
                    "tenants = ( { uids = [ 99999999999999999999L ]; } );\n");
}

Test(config_err, large_numbers_in_strings_and_comments_are_fine)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "# 99999999999\n/* 99999999999 */ // 99999999999\n"
                         "listen = { socket = \"/tmp/99999999999.sock\"; };\n"
                         "tenants = ( { name = \"n99999999999\"; max_body_bytes = 1.5e3; } );\n"),
                 -1, "the float is still the wrong type");
    cr_assert(strstr(err, ":4: tenants[0].max_body_bytes: must be an integer, not a float"), "%s", err);
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "# 99999999999\n/* 99999999999 */ // 99999999999\n"
                         "listen = { socket = \"/tmp/99999999999.sock\"; };\n"),
                 0, "%s", err);
    vf_config_free(&cfg);
}

/* ---- names and uniqueness ---- */

Test(config_err, duplicate_provider_name)
{
    fx_expect_error(5, "tenants[0].providers[1].name: duplicate provider name \"direct\" (also tenants[0].providers[0])",
                    "tenants = ( {\n  providers = (\n"
                    "    { name = \"direct\"; kind = \"direct\"; },\n"
                    "    { kind = \"direct\";\n      name = \"direct\"; }\n  );\n} );\n");
}

Test(config_err, bad_names)
{
    fx_expect_error(4, "tenants[0].providers[0].name: \"Fetcher\" must be 1-32 characters of a-z, 0-9, '_', '-'",
                    FX_TENANT_WITH("providers = ( { name = \"Fetcher\"; kind = \"direct\"; } );"));
    fx_expect_error(4, "tenants[0].providers[0].name: \"\" must be 1-32",
                    FX_TENANT_WITH("providers = ( { name = \"\"; kind = \"direct\"; } );"));
    fx_expect_error(4, "must be 1-32 characters",
                    FX_TENANT_WITH("providers = ( { name = \"abcdefghijklmnopqrstuvwxyz0123456\"; kind = \"direct\"; } );"));
    fx_expect_error(1, "tenants[0].name: \"big tenant\" must be 1-32", "tenants = ( { name = \"big tenant\"; } );\n");
    fx_expect_error(4, "tenants[0].providers[0].name: missing", FX_TENANT_WITH("providers = ( { kind = \"direct\"; } );"));
}

Test(config_err, tenant_rules)
{
    fx_expect_error(1, "tenants: must list at least one tenant", "tenants = ();\n");
    fx_expect_error(3, "tenants[1].name: duplicate tenant name \"a\" (also tenants[0])",
                    "tenants = ( { name = \"a\"; uids = [ 1 ]; },\n"
                    "  { uids = [ 2 ];\n    name = \"a\"; } );\n");
    fx_expect_error(4, "tenants[1].uids[1]: uid 1000 is already mapped to tenant \"a\"",
                    "tenants = ( { name = \"a\"; uids = [ 7, 1000 ]; },\n"
                    "  { name = \"b\";\n    uids = [ 8,\n 1000 ]; } );\n");
    fx_expect_error(2, "tenants[1]: only one tenant may leave uids empty without tokens (tenants[0] \"a\" already serves any peer)",
                    "tenants = ( { name = \"a\"; },\n  { name = \"b\"; } );\n");
    fx_expect_error(4, "tenants[0].uids[1]: uid 5 is listed twice", FX_TENANT_WITH("uids = [ 5, 5 ];"));
}

/* ---- providers ---- */

Test(config_err, bad_kind)
{
    fx_expect_error(5, "tenants[0].providers[1].kind: must be \"direct\" or \"http_api\"",
                    "tenants = ( {\n  providers = (\n    { name = \"direct\"; kind = \"direct\"; },\n"
                    "    { name = \"x\";\n      kind = \"grpc\"; }\n  );\n} );\n");
    fx_expect_error(4, "tenants[0].providers[0].kind: missing (must be \"direct\" or \"http_api\")",
                    FX_TENANT_WITH("providers = ( { name = \"x\"; } );"));
}

Test(config_err, direct_rejects_api_settings)
{
    fx_expect_error(4, "tenants[0].providers[0].endpoint: only valid for kind \"http_api\"",
                    FX_TENANT_WITH("providers = ( { name = \"d\"; kind = \"direct\"; endpoint = \"https://a/{url}\"; } );"));
    fx_expect_error(4, "tenants[0].providers[0].response: only valid for kind \"http_api\"",
                    FX_TENANT_WITH("providers = ( { name = \"d\"; kind = \"direct\"; response = { mode = \"raw\"; }; } );"));
}

Test(config_err, http_api_requires_endpoint_and_credential)
{
    fx_expect_error(4, "tenants[0].providers[0].endpoint: missing (required for kind \"http_api\")",
                    FX_TENANT_WITH("providers = ( { name = \"a\"; kind = \"http_api\"; } );"));
    fx_expect_error(4, "tenants[0].providers[0].credential: missing (required for kind \"http_api\")",
                    FX_TENANT_WITH("providers = ( { name = \"a\"; kind = \"http_api\"; endpoint = \"https://a/{url}\"; } );"));
}

Test(config_err, bad_endpoints)
{
    static const struct { const char *endpoint, *why; } cases[] = {
        { "https://api.example/fetch", "must contain exactly one {url}" },
        { "https://api.example/{url}/{url}", "must contain {url} only once" },
        { "ftp://api.example/{url}", "must be an http:// or https:// URL" },
        { "HTTPS://api.example/{url}", "must be an http:// or https:// URL" },
        { "api.example/{url}", "must be an http:// or https:// URL" },
        { "https://{url}/x", "{url} must be in the path or query, not the host" },
        { "https://api.{url}.example/", "{url} must be in the path or query, not the host" },
        { "https://user:pw@api.example/?u={url}", "must not carry user:password@" },
        { "https:///{url}", "has no host" },
        { "https://api.example/ {url}", "must not contain spaces, control characters or non-ASCII bytes" },
        { "https://api.example/\\t{url}", "must not contain spaces" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[256];
        snprintf(what, sizeof what, "tenants[0].providers[1].endpoint: %s", cases[i].why);
        fx_expect_error(6, what,
                        "tenants = ( {\n  name = \"t\";\n  providers = (\n"
                        "    { name = \"direct\"; kind = \"direct\"; },\n"
                        "    { name = \"api\"; kind = \"http_api\";\n"
                        "      endpoint = \"%s\";\n"
                        "      credential = { header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\"; };\n"
                        "    }\n  );\n} );\n",
                        cases[i].endpoint);
    }
}

/* user_agent, robots, robots_ttl_s (policy/config_manners.c). */
Test(config_err, manners)
{
    fx_expect_error(4, "tenants[0].robots: must be \"obey\" or \"ignore\"", FX_TENANT_WITH("robots = \"yes\";"));
    fx_expect_error(4, "tenants[0].robots_ttl_s: ", FX_TENANT_WITH("robots_ttl_s = 0;"));
    fx_expect_error(4, "tenants[0].user_agent: must be printable ASCII", FX_TENANT_WITH("user_agent = \"a\\nb\";"));
    fx_expect_error(4, "tenants[0].user_agent: must start with a product token", FX_TENANT_WITH("user_agent = \"\";"));
}

/* method, body and headers (policy/config_request.c): line 8 holds `extra`. */
Test(config_err, request_shape)
{
#define KEY_ENV "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";"
    static const struct { const char *extra, *why; } cases[] = {
        { "method = \"PUT\";", "method: must be \"GET\" or \"POST\"" },
        { "body = { url = \"{url}\"; };", "body: only valid with method \"POST\"" },
        { "method = \"POST\"; body = \"{url: 1\";", "body: is not JSON" },
        { "method = \"POST\"; body = \"[1]\";", "body: must be a JSON object" },
        { "method = \"POST\"; body = { t = \"ms {timeout_ms}\"; };",
          "body: {timeout_ms} and {timeout_s} must be a whole string value" },
        { "headers = [ \"Host: x\" ];", "headers[0]: Host is set by the credential proxy" },
        { "headers = [ \"Content-Length: 3\" ];", "headers[0]: Content-Length is set by" },
        { "headers = [ \"Accept-Encoding: gzip\" ];", "headers[0]: Accept-Encoding is set by" },
        { "headers = [ \"authorization: Bearer k\" ];", "headers[0]: authorization is set by" },
        { "headers = [ \"User-Agent: x\" ];", "headers[0]: User-Agent is set by" },
        { "headers = [ \"X-Key: again\" ];", "headers[0]: X-Key carries the key" },
        { "headers = [ \"no colon\" ];", "headers[0]: must read \"Name: value\"" },
        { "headers = [ \"X-A: \\x01\" ];", "headers[0]: value must be printable ASCII" },
        { "response = { title = \"/t\"; };", "response.title: only valid with mode \"json\"" },
        { "response = { mode = \"json\"; pointer = \"/a\"; title = \"t\"; };",
          "response.title: must be a JSON pointer" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[256];
        snprintf(what, sizeof what, "tenants[0].providers[1].%s", cases[i].why);
        fx_expect_error(8, what, FX_API_PROVIDER(API_EP, KEY_ENV, "%s"), cases[i].extra);
    }
    fx_expect_error(5, "tenants[0].providers[1].body: missing (required with method \"POST\")",
                    FX_API_PROVIDER(API_EP, KEY_ENV, "method = \"POST\";"));
    fx_expect_error(6, "tenants[0].providers[1].endpoint: neither endpoint nor body contains {url}",
                    FX_API_PROVIDER("https://api.example/scrape", KEY_ENV, "method = \"POST\"; body = { u = \"x\"; };"));
    fx_expect_error(6, "tenants[0].providers[1].endpoint: must contain exactly one {url}",
                    FX_API_PROVIDER("https://api.example/scrape", KEY_ENV, ""));
#undef KEY_ENV
}

Test(config_err, credential_shape)
{
    fx_expect_error(7, "tenants[0].providers[1].credential: set exactly one of header, query or basic",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; query = \"k\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential: set exactly one of header, query or basic",
                    FX_API_PROVIDER(API_EP, "key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential: set exactly one of key_file or key_env",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential: set exactly one of key_file or key_env",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\"; key_file = \"/k\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.format: must contain {key} exactly once",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; format = \"Bearer\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.format: must contain {key} exactly once",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; format = \"{key}{key}\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.format: must not contain control characters",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; format = \"a\\r\\n{key}\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.header: \"X Key\" is not a usable HTTP header name",
                    FX_API_PROVIDER(API_EP, "header = \"X Key\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.header: \"Host\" is not a usable HTTP header name",
                    FX_API_PROVIDER(API_EP, "header = \"Host\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.query: \"api key\" must be 1-64 characters",
                    FX_API_PROVIDER(API_EP, "query = \"api key\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.key_env: \"1BAD\" is not an environment variable name",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"1BAD\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.key_file: must be an absolute path",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_file = \"fetcher.key\";", ""));
    /* HTTP Basic (credential.basic): a user:password template, alone. */
    fx_expect_error(7, "tenants[0].providers[1].credential: set exactly one of header, query or basic",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; basic = \"{key}:\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.basic: must contain {key} exactly once",
                    FX_API_PROVIDER(API_EP, "basic = \"user:\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.basic: must read \"user:password\"",
                    FX_API_PROVIDER(API_EP, "basic = \"{key}\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.basic: must be printable ASCII",
                    FX_API_PROVIDER(API_EP, "basic = \"{key}:\\n\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
    fx_expect_error(7, "tenants[0].providers[1].credential.format: only valid with header",
                    FX_API_PROVIDER(API_EP, "basic = \"{key}:\"; format = \"x {key}\"; key_env = \"VF_TEST_ENV_KEY\";", ""));
}

Test(config_err, response_shape)
{
    fx_expect_error(8, "tenants[0].providers[1].response.mode: must be \"raw\" or \"json\"",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";", "response = { mode = \"xml\"; };"));
    fx_expect_error(8, "tenants[0].providers[1].response.pointer: missing (required with mode \"json\")",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";", "response = { mode = \"json\"; };"));
    fx_expect_error(8, "tenants[0].providers[1].response.pointer: must be a JSON pointer starting with \"/\"",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";",
                                    "response = { mode = \"json\"; pointer = \"data/content\"; };"));
    fx_expect_error(8, "tenants[0].providers[1].response.pointer: must be a JSON pointer",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";",
                                    "response = { mode = \"json\"; pointer = \"/a~2b\"; };"));
    fx_expect_error(8, "tenants[0].providers[1].response.pointer: only valid with mode \"json\"",
                    FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";",
                                    "response = { pointer = \"/data\"; };"));
    /* content / encoding: what the pointed-to field holds (json mode only). */
    static const struct { const char *response, *why; } field_cases[] = {
        { "response = { content = \"html\"; };", "response.content: only valid with mode \"json\"" },
        { "response = { encoding = \"base64\"; };", "response.encoding: only valid with mode \"json\"" },
        { "response = { mode = \"json\"; pointer = \"/a\"; content = \"pdf\"; };",
          "response.content: must be \"text\" or \"html\"" },
        { "response = { mode = \"json\"; pointer = \"/a\"; encoding = \"hex\"; };",
          "response.encoding: must be \"none\" or \"base64\"" },
        { "response = { mode = \"json\"; pointer = \"/a\"; content = \"html\"; title = \"/t\"; };",
          "response.title: not with content \"html\"" },
    };
    for (size_t i = 0; i < sizeof field_cases / sizeof field_cases[0]; i++) {
        char what[256];
        snprintf(what, sizeof what, "tenants[0].providers[1].%s", field_cases[i].why);
        fx_expect_error(8, what, FX_API_PROVIDER(API_EP, "header = \"X-Key\"; key_env = \"VF_TEST_ENV_KEY\";", "%s"),
                        field_cases[i].response);
    }
}

/* ---- keys ---- */

Test(config_err, key_file_group_readable_refused)
{
    char *key = fx_write("fetcher.key", FX_SECRET "\n", strlen(FX_SECRET) + 1, 0644);
    char what[512];
    snprintf(what, sizeof what,
             "tenants[0].providers[1].credential.key_file: key file %s is readable by group/others (mode 0644); chmod 600 it",
             key);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), key);

    cr_assert_eq(chmod(key, 0620), 0);
    snprintf(what, sizeof what, "key file %s is accessible by group/others (mode 0620)", key);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), key);
    cr_assert_eq(chmod(key, 0604), 0);
    snprintf(what, sizeof what, "key file %s is readable by group/others (mode 0604)", key);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), key);
    free(key);
}

Test(config_err, key_file_owned_by_someone_else_refused)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to chown the key file to another uid");
    char *key = fx_key_file();
    cr_assert_eq(chown(key, 12345, 12345), 0);
    char what[512];
    snprintf(what, sizeof what, "key file %s is owned by uid 12345; it must belong to the broker (uid 0) or root", key);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), key);
    free(key);
}

Test(config_err, key_file_not_regular_or_missing)
{
    char fifo[256], dir[256], missing[256], what[512];
    snprintf(fifo, sizeof fifo, "%s/fifo.key", fx_dir);
    snprintf(dir, sizeof dir, "%s/dir.key", fx_dir);
    snprintf(missing, sizeof missing, "%s/none.key", fx_dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(what, sizeof what, "key file %s is not a regular file", fifo);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), fifo);
    snprintf(what, sizeof what, "key file %s is not a regular file", dir);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), dir);
    snprintf(what, sizeof what, "key file %s: No such file or directory", missing);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), missing);
}

Test(config_err, key_file_content_rules)
{
    static const struct { const char *content; size_t len; const char *why; } cases[] = {
        { "short\n", 6, "is too short (5 bytes; at least 8)" },
        { "1234567", 7, "is too short (7 bytes; at least 8)" },
        { "", 0, "is empty" },
        { "\n", 1, "is empty" },
        { "s3cr3t-VALUE\r-0123456789\n", 25, "contains a CR, LF or NUL byte" },
        { FX_SECRET "\n" FX_SECRET "\n", 2 * sizeof FX_SECRET, "contains a CR, LF or NUL byte" },
        { FX_SECRET "\0tail\n", sizeof FX_SECRET + 5, "contains a CR, LF or NUL byte" },
        { FX_SECRET "\n\n", sizeof FX_SECRET + 1, "contains a CR, LF or NUL byte" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *key = fx_write("k.key", cases[i].content, cases[i].len, 0600);
        char what[512];
        snprintf(what, sizeof what, "tenants[0].providers[1].credential.key_file: key file %s %s", key,
                 cases[i].why);
        fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), key);
        free(key);
    }
    char big[5000];
    memset(big, 'k', sizeof big);
    char *key = fx_write("big.key", big, sizeof big, 0600);
    char what[512];
    snprintf(what, sizeof what, "key file %s is longer than 4096 bytes", key);
    fx_expect_error(7, what, FX_API_PROVIDER(API_EP, API_FILE_CRED, ""), key);
    free(key);
}

Test(config_err, key_env_rules)
{
    unsetenv("VF_TEST_UNSET_KEY");
    fx_expect_error(7, "tenants[0].providers[1].credential.key_env: environment variable VF_TEST_UNSET_KEY is not set",
                    FX_API_PROVIDER(API_EP, "query = \"k\"; key_env = \"VF_TEST_UNSET_KEY\";", ""));
    cr_assert_eq(setenv("VF_TEST_KEY", "", 1), 0);
    fx_expect_error(7, "tenants[0].providers[1].credential.key_env: environment variable VF_TEST_KEY is empty",
                    FX_API_PROVIDER(API_EP, "query = \"k\"; key_env = \"VF_TEST_KEY\";", ""));
    cr_assert_eq(setenv("VF_TEST_KEY", "abc", 1), 0);
    fx_expect_error(7, "environment variable VF_TEST_KEY is too short (3 bytes; at least 8)",
                    FX_API_PROVIDER(API_EP, "query = \"k\"; key_env = \"VF_TEST_KEY\";", ""));
    cr_assert_eq(setenv("VF_TEST_KEY", FX_SECRET "\r" FX_SECRET, 1), 0);
    fx_expect_error(7, "environment variable VF_TEST_KEY contains a CR, LF or NUL byte",
                    FX_API_PROVIDER(API_EP, "query = \"k\"; key_env = \"VF_TEST_KEY\";", ""));
}

Test(config_err, later_error_after_key_loaded_does_not_leak)
{
    /* The key is read before the response block fails; nothing of it may show. */
    char *key = fx_key_file();
    fx_expect_error(8, "tenants[0].providers[1].response.mode: must be \"raw\" or \"json\"",
                    FX_API_PROVIDER(API_EP, API_FILE_CRED, "response = { mode = \"" FX_SECRET "x\"; };"), key);
    free(key);
}

/* ---- egress, classify, listen, worker ---- */

Test(config_err, bad_cidrs_and_ports)
{
    fx_expect_error(4, "tenants[0].egress.allow[1]: \"10.0.0.1/8\" is not an IPv4/IPv6 address or CIDR without host bits",
                    FX_TENANT_WITH("egress = { allow = [ \"127.0.0.1/32\", \"10.0.0.1/8\" ]; };"));
    fx_expect_error(4, "tenants[0].egress.deny[0]: \"example.com\" is not",
                    FX_TENANT_WITH("egress = { deny = [ \"example.com\" ]; };"));
    fx_expect_error(4, "tenants[0].egress.ports: must list at least one port (or set any_port = true)",
                    FX_TENANT_WITH("egress = { ports = [ ]; };"));
}

Test(config_err, bad_marker_pattern)
{
    fx_expect_error(2, "classify.interstitial_markers[1]: bad PCRE2 pattern at offset",
                    "classify = { interstitial_markers = [ \"ok\",\n \"(unclosed\" ]; };\n");
    fx_expect_error(1, "classify.interstitial_markers[0]: must not be empty",
                    "classify = { interstitial_markers = [ \"\" ]; };\n");
    fx_expect_error(1, "classify.extra_markers[0]: must not be empty",
                    "classify = { extra_markers = [ \"paywall: \" ]; };\n");
    fx_expect_error(1, "tenants[0].classify.disable[0]: \"too_short\" is not a family that can be disabled",
                    "tenants = ( { name = \"a\"; classify = { disable = [ \"too_short\" ]; }; } );\n");
}

Test(config_err, listen_and_worker_paths)
{
    fx_expect_error(2, "listen.socket: must be an absolute path", "listen = {\n  socket = \"relative.sock\";\n};\n");
    char long_path[200];
    memset(long_path, 'a', sizeof long_path - 1);
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = '\0';
    fx_expect_error(1, "listen.socket: must be an absolute path of at most 107 bytes",
                    "listen = { socket = \"%s\"; };\n", long_path);

    char *plain = fx_write("not-exec", "x", 1, 0644);
    char what[512];
    snprintf(what, sizeof what, "worker.path: %s is not an executable file", plain);
    fx_expect_error(2, what, "worker = {\n  path = \"%s\";\n};\n", plain);
    fx_expect_error(2, "worker.path: must be an absolute path", "worker = {\n  path = \"worker/verifetch-worker\";\n};\n");
    fx_expect_error(2, "worker.test_hook: must be 1-64 characters", "worker = {\n  test_hook = \"Bad Hook\";\n};\n");
    free(plain);
}

Test(config_err, explicit_ca_file_must_exist_and_be_pem)
{
    fx_expect_error(2, "worker.ca_file: CA file /nonexistent/ca.pem does not exist",
                    "worker = {\n  ca_file = \"/nonexistent/ca.pem\";\n};\n");
    char *junk = fx_write("junk.pem", "not a certificate\n", 18, 0644);
    char what[512];
    snprintf(what, sizeof what, "worker.ca_file: CA file %s contains no PEM certificate", junk);
    fx_expect_error(2, what, "worker = {\n  ca_file = \"%s\";\n};\n", junk);
    free(junk);
}

Test(config_err, unreadable_config_files)
{
    vf_config cfg;
    char err[512], path[256];
    snprintf(path, sizeof path, "%s/missing.conf", fx_dir);
    cr_assert_eq(vf_config_load(path, &cfg, err, sizeof err), -1);
    cr_assert(strstr(err, path) && strstr(err, "No such file or directory"), "%s", err);
    cr_assert_eq(vf_config_load(fx_dir, &cfg, err, sizeof err), -1);
    cr_assert(strstr(err, "not a regular file"), "%s", err);
    cr_assert_eq(vf_config_load(NULL, &cfg, err, sizeof err), -1);
    cr_assert(strstr(err, "no config file"), "%s", err);
    /* err may be omitted entirely */
    cr_assert_eq(vf_config_load(path, &cfg, NULL, 0), -1);
}
