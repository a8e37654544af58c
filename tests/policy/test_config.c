/* Config loading that succeeds: the built-in default, a full file read back
 * field by field, the shipped example, and the documented defaults/quirks. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "config_fixture.h"
#include "broker/judge/wall.h"
#include "policy/config.h"
#include "policy/config_internal.h"
#include "policy/tenant_auth.h"

TestSuite(config_ok, .init = fx_setup, .fini = fx_teardown);

static struct sockaddr_in v4(const char *ip, uint16_t port)
{
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
    cr_assert_eq(inet_pton(AF_INET, ip, &in.sin_addr), 1);
    return in;
}

static void assert_builtin_tenant(const vf_tenant_config *t)
{
    cr_assert_str_eq(t->name, "default");
    cr_assert_eq(t->n_uids, 0);
    cr_assert_eq(t->n_providers, 1);
    cr_assert_str_eq(t->providers[0].name, "direct");
    cr_assert_eq(t->providers[0].kind, VF_PROVIDER_DIRECT);
    cr_assert_eq(t->providers[0].mode, VF_MODE_RAW);
    cr_assert_null(t->providers[0].secret);
    cr_assert_null(t->providers[0].endpoint);
    cr_assert_eq(t->attempt_ceiling, 3);
    cr_assert_eq(t->timeout_ms, 15000);
    cr_assert_eq(t->max_body_bytes, 8u * 1024 * 1024);
    cr_assert_eq(t->egress.n_allow + t->egress.n_deny + t->egress.n_ports + t->egress.n_self, 0);
    cr_assert_not(t->egress.any_port);
}

Test(config_ok, builtin_default)
{
    vf_config cfg;
    char err[512] = "";
    cr_assert_eq(vf_config_default(&cfg, err, sizeof err), 0, "%s", err);
    char *sock = vf_default_socket_path(), *worker = vf_default_worker_path();
    cr_assert_str_eq(cfg.socket_path, sock);
    cr_assert_str_eq(cfg.worker_path, worker);
    free(sock);
    free(worker);
    cr_assert_eq(cfg.socket_mode, 0660);
    cr_assert_str_eq(cfg.ca_file, VF_DEFAULT_CA_FILE);
    cr_assert_eq(cfg.ca_pem != NULL, access(VF_DEFAULT_CA_FILE, R_OK) == 0,
                 "ca_pem is read exactly when the default bundle exists");
    if (cfg.ca_pem)
        cr_assert(memmem(cfg.ca_pem, cfg.ca_pem_len, "-----BEGIN CERTIFICATE-----", 27));
    cr_assert_eq(cfg.max_concurrent, 64);
    cr_assert_null(cfg.markers);
    cr_assert_null(cfg.test_hook);
    cr_assert_eq(cfg.n_tenants, 1);
    assert_builtin_tenant(&cfg.tenants[0]);

    /* The default egress policy is live: private denied, public allowed on 443 only. */
    struct sockaddr_in priv = v4("10.0.0.1", 443), pub = v4("93.184.216.34", 443),
                       odd = v4("93.184.216.34", 8080);
    cr_assert_str_eq(vf_egress_check(&cfg.tenants[0].egress, (struct sockaddr *)&priv), "rfc1918");
    cr_assert_null(vf_egress_check(&cfg.tenants[0].egress, (struct sockaddr *)&pub));
    cr_assert_str_eq(vf_egress_check(&cfg.tenants[0].egress, (struct sockaddr *)&odd), "port");
    vf_config_free(&cfg);
    cr_assert_null(cfg.tenants);
    vf_config_free(&cfg);
}

Test(config_ok, empty_file_is_the_builtin_default)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "# nothing here\n"), 0, "%s", err);
    cr_assert_eq(cfg.n_tenants, 1);
    assert_builtin_tenant(&cfg.tenants[0]);
    cr_assert_eq(cfg.socket_mode, 0660);
    cr_assert_eq(cfg.max_concurrent, 64);
    cr_assert_eq(cfg.zygote_max_workers, 1000);
    cr_assert_eq(cfg.zygote_max_age_s, 600);
    vf_config_free(&cfg);
}

Test(config_ok, zygote_rotation_limits_and_zero_for_never)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "worker = { zygote_max_workers = 1; zygote_max_age_s = 0; };\n"),
                 0, "%s", err);
    cr_assert_eq(cfg.zygote_max_workers, 1);
    cr_assert_eq(cfg.zygote_max_age_s, 0);
    vf_config_free(&cfg);
}

static const char full_config[] =
    "listen = { socket = \"/tmp/vf-test.sock\"; mode = 0640; };\n"
    "worker = {\n"
    "  path = \"%s\";\n"
    "  ca_file = \"%s\";\n"
    "  max_concurrent = 7;\n"
    "  test_hook = \"socket_after_confine\";\n"
    "};\n"
    "classify = { interstitial_markers = [ \"just a moment\", \"wall\\\\s+ahead\" ]; };\n"
    "tenants = (\n"
    "  {\n"
    "    name = \"alpha\";\n"
    "    uids = ( 1000, 1001, 3000000000L );\n"
    "    attempt_ceiling = 5;\n"
    "    timeout_ms = 2500;\n"
    "    max_body_bytes = 65536;\n"
    "    egress = {\n"
    "      allow = [ \"127.0.0.1/32\", \"fd00::/8\" ];\n"
    "      deny = [ \"93.184.216.0/24\" ];\n"
    "      ports = [ 8080, 443 ];\n"
    "      any_port = false;\n"
    "    };\n"
    "    providers = (\n"
    "      { name = \"direct\"; kind = \"direct\"; cost = 0; },\n"
    "      { name = \"fetcher\"; kind = \"http_api\";\n"
    "        endpoint = \"https://api.fetcher.example/v1/fetch?url={url}\";\n"
    "        credential = { header = \"Authorization\"; format = \"Bearer {key}\"; key_file = \"%s\"; };\n"
    "        response = { mode = \"json\"; pointer = \"/data/content\"; };\n"
    "        cost = 0.002; },\n"
    "      { name = \"scraper_2\"; kind = \"http_api\";\n"
    "        endpoint = \"http://127.0.0.1:9000/scrape/{url}\";\n"
    "        credential = { query = \"api_key\"; key_env = \"VF_TEST_SCRAPER_KEY\"; };\n"
    "        response = { mode = \"raw\"; };\n"
    "      }\n"
    "    );\n"
    "  },\n"
    "  {\n"
    "    name = \"beta\";\n"
    "    egress = { any_port = true; };\n"
    "    providers = ();\n"
    "  }\n"
    ");\n";

Test(config_ok, full_file_round_trips)
{
    static const char pem[] = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
    char *worker = fx_write("worker", "#!/bin/sh\n", 10, 0755);
    char *ca = fx_write("ca.pem", pem, strlen(pem), 0644);
    char *key = fx_key_file();
    cr_assert_eq(setenv("VF_TEST_SCRAPER_KEY", "env-key-abcdefgh", 1), 0);

    vf_config cfg;
    char err[1024];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, full_config, worker, ca, key), 0, "%s", err);

    cr_assert_str_eq(cfg.socket_path, "/tmp/vf-test.sock");
    cr_assert_eq(cfg.socket_mode, 0640);
    cr_assert_str_eq(cfg.worker_path, worker);
    cr_assert_str_eq(cfg.ca_file, ca);
    cr_assert_eq(cfg.ca_pem_len, strlen(pem));
    cr_assert_eq(memcmp(cfg.ca_pem, pem, strlen(pem)), 0);
    cr_assert_eq(cfg.max_concurrent, 7);
    cr_assert_str_eq(cfg.test_hook, "socket_after_confine");
    cr_assert_eq(cfg.n_markers, 2);
    cr_assert_str_eq(cfg.markers[0], "just a moment");
    cr_assert_str_eq(cfg.markers[1], "wall\\s+ahead");
    cr_assert_eq(cfg.n_tenants, 2);

    const vf_tenant_config *a = &cfg.tenants[0];
    cr_assert_str_eq(a->name, "alpha");
    cr_assert_eq(a->n_uids, 3);
    cr_assert_eq(a->uids[0], 1000);
    cr_assert_eq(a->uids[1], 1001);
    cr_assert_eq(a->uids[2], (uid_t)3000000000u);
    cr_assert_eq(a->attempt_ceiling, 5);
    cr_assert_eq(a->timeout_ms, 2500);
    cr_assert_eq(a->max_body_bytes, 65536);
    cr_assert_eq(a->egress.n_allow, 2);
    cr_assert_eq(a->egress.allow[0].family, AF_INET);
    cr_assert_eq(a->egress.allow[0].prefix, 32);
    cr_assert_eq(a->egress.allow[1].family, AF_INET6);
    cr_assert_eq(a->egress.allow[1].prefix, 8);
    cr_assert_eq(a->egress.n_deny, 1);
    cr_assert_eq(a->egress.deny[0].prefix, 24);
    cr_assert_eq(a->egress.n_ports, 2);
    cr_assert_eq(a->egress.ports[0], 8080);
    cr_assert_eq(a->egress.ports[1], 443);
    cr_assert_not(a->egress.any_port);
    struct sockaddr_in lo = v4("127.0.0.1", 8080), denied = v4("93.184.216.34", 443);
    cr_assert_null(vf_egress_check(&a->egress, (struct sockaddr *)&lo));
    cr_assert_str_eq(vf_egress_check(&a->egress, (struct sockaddr *)&denied), "tenant_deny");

    cr_assert_eq(a->n_providers, 3);
    const vf_provider_config *d = &a->providers[0], *f = &a->providers[1], *s = &a->providers[2];
    cr_assert_str_eq(d->name, "direct");
    cr_assert_eq(d->kind, VF_PROVIDER_DIRECT);
    cr_assert_null(d->secret);
    cr_assert_float_eq(d->cost_per_call, 0.0, 1e-12);

    cr_assert_str_eq(f->name, "fetcher");
    cr_assert_eq(f->kind, VF_PROVIDER_HTTP_API);
    cr_assert_str_eq(f->endpoint, "https://api.fetcher.example/v1/fetch?url={url}");
    cr_assert_str_eq(f->cred_header, "Authorization");
    cr_assert_null(f->cred_query);
    cr_assert_str_eq(f->cred_format, "Bearer {key}");
    cr_assert_str_eq(f->secret, FX_SECRET, "trailing newline stripped");
    char origin[300];
    snprintf(origin, sizeof origin, "file %s", key);
    cr_assert_str_eq(f->key_origin, origin);
    cr_assert_eq(f->mode, VF_MODE_JSON);
    cr_assert_str_eq(f->json_pointer, "/data/content");
    cr_assert_float_eq(f->cost_per_call, 0.002, 1e-12);

    cr_assert_str_eq(s->name, "scraper_2");
    cr_assert_str_eq(s->endpoint, "http://127.0.0.1:9000/scrape/{url}");
    cr_assert_null(s->cred_header);
    cr_assert_str_eq(s->cred_query, "api_key");
    cr_assert_str_eq(s->cred_format, "{key}");
    cr_assert_str_eq(s->secret, "env-key-abcdefgh");
    cr_assert_str_eq(s->key_origin, "env VF_TEST_SCRAPER_KEY");
    cr_assert_eq(s->mode, VF_MODE_RAW);
    cr_assert_null(s->json_pointer);

    const vf_tenant_config *b = &cfg.tenants[1];
    cr_assert_str_eq(b->name, "beta");
    cr_assert_eq(b->n_uids, 0);
    cr_assert_eq(b->n_providers, 0, "an explicit () means no providers");
    cr_assert(b->egress.any_port);
    cr_assert_eq(b->attempt_ceiling, 3, "unset limits keep their defaults");
    cr_assert_eq(b->timeout_ms, 15000);
    cr_assert_eq(b->max_body_bytes, 8u * 1024 * 1024);

    vf_config_free(&cfg);
    free(worker);
    free(ca);
    free(key);
}

static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "re");
    cr_assert_not_null(f, "cannot open %s", path);
    char *buf = malloc(1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static char *example_text(void)
{
    const char *root = getenv("VERIFETCH_SOURCE_ROOT");
    cr_assert_not_null(root, "VERIFETCH_SOURCE_ROOT not set (run through meson test)");
    char path[4096];
    snprintf(path, sizeof path, "%s/packaging/verifetch.conf.example", root);
    return read_whole(path);
}

/* Returns a malloc'd copy of text with the first `from` replaced by `to`. */
static char *replace_once(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    cr_assert_not_null(at, "example no longer contains \"%s\"", from);
    char *out = NULL;
    cr_assert_geq(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)), 0);
    return out;
}

static int load_text(const char *text, vf_config *cfg, char *err, size_t errlen)
{
    free(fx_write("example.conf", text, strlen(text), 0644));
    char path[256];
    snprintf(path, sizeof path, "%s/example.conf", fx_dir);
    return vf_config_load(path, cfg, err, errlen);
}

/* What a user does to enable the example's keyed provider: drop one "# " from
 * each config line between "# BEGIN keyed provider" and "# END" ("##" notes
 * stay comments) and add the comma after the direct provider. malloc'd. */
static char *enable_keyed_provider(const char *text)
{
    char *out = malloc(strlen(text) + 64), *o = out;
    cr_assert_not_null(out);
    bool in_block = false;
    int blocks = 0;
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        size_t ind = strspn(line, " ");
        bool begin = strncmp(line + ind, "# BEGIN keyed provider", 22) == 0;
        bool end = strncmp(line + ind, "# END keyed provider", 20) == 0;
        bool config_line = in_block && !begin && !end && strncmp(line + ind, "# ", 2) == 0;
        memcpy(o, line, ind);
        o += ind;
        size_t skip = ind + (config_line ? 2 : 0);
        memcpy(o, line + skip, len - skip);
        o += len - skip;
        blocks += begin;
        in_block = (in_block || begin) && !end;
        line += len;
        if (*line == '\n')
            *o++ = *line++;
    }
    *o = '\0';
    cr_assert_eq(blocks, 2, "the example has a keyed provider block and its ordering rule");
    char *with_comma = replace_once(out, "kind = \"direct\"; }   #", "kind = \"direct\"; },  #");
    free(out);
    return with_comma;
}

Test(config_ok, shipped_example_loads)
{
    char *shipped = example_text();
    char *text = enable_keyed_provider(shipped);
    free(shipped);
    char *key = fx_key_file();
    char *with_key = replace_once(text, "/etc/verifetch/fetcher.key", key);
    vf_config cfg;
    char err[1024];
    cr_assert_eq(load_text(with_key, &cfg, err, sizeof err), 0, "example failed to load: %s", err);

    cr_assert_str_eq(cfg.socket_path, "/run/verifetch/verifetch.sock");
    cr_assert_eq(cfg.socket_mode, 0660);
    cr_assert_null(cfg.tcp_listen, "the example leaves the TCP listener off");
    cr_assert_eq(cfg.max_concurrent, 64);
    cr_assert_eq(cfg.n_markers, 2, "two extra markers, added to the always-on built-in families");
    cr_assert_eq(cfg.n_tenants, 3);
    const vf_tenant_config *agents = &cfg.tenants[0], *batch = &cfg.tenants[1],
                           *remote = &cfg.tenants[2];
    cr_assert_str_eq(agents->name, "agents");
    cr_assert_eq(agents->n_uids, 2);
    cr_assert_eq(agents->classify_disabled, 0u, "the example switches no wall family off");
    cr_assert_eq(agents->n_tokens, 0);
    cr_assert_eq(agents->quota_concurrent, 8);
    cr_assert_eq(agents->quota_rpm, 120);
    cr_assert_eq(agents->n_providers, 2);
    cr_assert_str_eq(agents->providers[1].name, "fetcher");
    cr_assert_str_eq(agents->providers[1].secret, FX_SECRET);
    cr_assert_str_eq(agents->providers[1].json_pointer, "/data/content");
    cr_assert_str_eq(agents->providers[1].cred_format, "Bearer {key}");
    cr_assert_eq(agents->egress.n_deny, 1);
    cr_assert_eq(agents->egress.n_allow_hosts, 1);
    cr_assert_str_eq(agents->egress.allow_hosts[0], "*.internal.example");
    cr_assert_eq(agents->egress.n_deny_hosts, 2);
    cr_assert_str_eq(agents->egress.deny_hosts[1], "metadata.google.internal");
    cr_assert_float_eq(agents->providers[1].cost_per_call, 0.002, 1e-12);
    cr_assert_str_eq(vf_tenant_user_agent(agents), "verifetch (+https://agents.example/contact)");
    cr_assert_not(agents->robots_ignore);
    cr_assert_eq(vf_tenant_robots_ttl_s(agents), 86400);
    cr_assert_str_eq(vf_tenant_user_agent(batch), VF_DEFAULT_USER_AGENT, "absent = verifetch/<version>");
    const vf_order_config *order = &agents->ordering;
    cr_assert_eq(order->strategy, VF_ORDER_DOMAIN);
    cr_assert(order->skip_unhealthy);
    cr_assert_not(order->drop_unlisted);
    cr_assert_not(order->has_budget, "budget is shown commented out");
    cr_assert_not(order->by_latency);
    cr_assert_eq(order->n_rules, 2);
    cr_assert_eq(order->rules[0].n_patterns, 2);
    cr_assert_str_eq(order->rules[0].patterns[1], "*.docs.example.com");
    cr_assert_eq(order->rules[0].n_providers, 2);
    cr_assert_str_eq(order->rules[0].providers[0], "fetcher");
    cr_assert_str_eq(order->rules[1].patterns[0], "*");
    /* The example's circuit block spells out the defaults. */
    vf_circuit_params defaults;
    vf_circuit_params_default(&defaults);
    cr_assert(agents->has_circuit);
    cr_assert_eq(agents->circuit.failure_threshold, defaults.failure_threshold);
    cr_assert_eq(agents->circuit.window, defaults.window);
    cr_assert_eq(agents->circuit.min_samples, defaults.min_samples);
    cr_assert_float_eq(agents->circuit.failure_rate, defaults.failure_rate, 1e-12);
    cr_assert_eq(agents->circuit.cooldown_ms, defaults.cooldown_ms);
    cr_assert_eq(agents->circuit.probe_lease_ms, defaults.probe_lease_ms);
    cr_assert_float_eq(agents->circuit.ewma_alpha, defaults.ewma_alpha, 1e-12);
    cr_assert_eq(agents->circuit.max_domains, defaults.max_domains);
    cr_assert_not(batch->has_circuit);
    cr_assert_eq(batch->ordering.strategy, VF_ORDER_STATIC);
    cr_assert_str_eq(batch->name, "batch");
    cr_assert_eq(batch->attempt_ceiling, 1);
    /* Issue 13 item 12: absent concurrency among three tenants is a fair
     * share of worker.max_concurrent (64 / 3, rounded up); absent rate is
     * unlimited. */
    cr_assert_eq(batch->quota_concurrent, 22, "absent concurrent quota = fair share");
    cr_assert_eq(batch->quota_rpm, 0, "absent requests_per_minute = unlimited");
    cr_assert_eq(batch->n_providers, 1, "absent providers = the built-in direct");
    cr_assert_eq(batch->providers[0].kind, VF_PROVIDER_DIRECT);
    cr_assert_str_eq(remote->name, "remote");
    cr_assert_eq(remote->n_uids, 0);
    cr_assert_eq(remote->n_tokens, 1);
    cr_assert_eq(remote->tokens[0].sha256[0], 0xbb);
    cr_assert_eq(remote->tokens[0].sha256[31], 0x82);
    /* A token-only tenant is no catch-all: unlisted unix peers are refused. */
    cr_assert_null(vf_tenant_for_uid(&cfg, 4242));
    cr_assert_eq(vf_tenant_for_uid(&cfg, 2000), batch);
    vf_config_free(&cfg);

    /* The commented-out TCP listener is valid as written once enabled. */
    char *with_tcp = replace_once(with_key, "# tcp = \"127.0.0.1:8089\";", "tcp = \"127.0.0.1:8089\";");
    cr_assert_eq(load_text(with_tcp, &cfg, err, sizeof err), 0, "example with tcp: %s", err);
    cr_assert_str_eq(cfg.tcp_listen, "127.0.0.1:8089");
    const struct sockaddr_in *in = (const struct sockaddr_in *)&cfg.tcp_addr;
    cr_assert_eq(in->sin_family, AF_INET);
    cr_assert_eq(ntohs(in->sin_port), 8089);
    vf_config_free(&cfg);
    free(with_tcp);
    free(with_key);
    free(key);
    free(text);
}

Test(config_ok, example_documents_every_setting)
{
    static const char *const settings[] = {
        "listen", "socket", "mode", "worker", "path", "ca_file", "max_concurrent", "test_hook",
        "zygote_max_workers", "zygote_max_age_s", "subordinate_uid",
        "classify", "extra_markers", "disable", "tenants", "name", "uids", "attempt_ceiling",
        "timeout_ms", "max_body_bytes", "egress", "allow", "deny", "ports", "any_port",
        "providers", "kind", "endpoint", "credential", "header", "query", "format", "key_file",
        "key_env", "response", "pointer", "cost", "tcp", "tokens", "quota", "concurrent",
        "requests_per_minute", "allow_hosts", "deny_hosts", "ordering", "strategy",
        "skip_unhealthy", "rules", "match", "unlisted", "budget", "by_latency", "circuit",
        "failure_threshold", "window", "min_samples", "failure_rate", "cooldown_ms",
        "probe_lease_ms", "ewma_alpha", "max_domains",
    };
    char *text = example_text();
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "%s =", settings[i]);
        cr_expect(strstr(text, needle) != NULL, "example never shows \"%s\"", needle);
    }
    free(text);
}

Test(config_ok, key_newline_forms)
{
    static const struct { const char *content; const char *key; } cases[] = {
        { "abcdefgh12", "abcdefgh12" },
        { "abcdefgh12\n", "abcdefgh12" },
        { "abcdefgh12\r\n", "abcdefgh12" },
        { "ab cd\tef=+/", "ab cd\tef=+/" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *key = fx_write("k", cases[i].content, strlen(cases[i].content), 0600);
        vf_config cfg;
        char err[1024];
        int rc = fx_load(&cfg, err, sizeof err,
                         FX_API_PROVIDER("https://x.example/?u={url}", "header = \"X-Key\"; key_file = \"%s\";", ""),
                         key);
        cr_assert_eq(rc, 0, "case %zu: %s", i, err);
        cr_expect_str_eq(cfg.tenants[0].providers[1].secret, cases[i].key, "case %zu", i);
        vf_config_free(&cfg);
        free(key);
    }
}

Test(config_ok, mode_octal_digits_and_hex)
{
    static const struct { const char *text; unsigned mode; } cases[] = {
        { "0660", 0660 }, { "0600", 0600 }, { "0", 0 }, { "0777", 0777 }, { "660", 0660 },
        { "0x1a4", 0644 }, { "0x1FF", 0777 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vf_config cfg;
        char err[512];
        cr_assert_eq(fx_load(&cfg, err, sizeof err, "listen = { mode = %s; };\n", cases[i].text), 0,
                     "%s: %s", cases[i].text, err);
        cr_expect_eq(cfg.socket_mode, cases[i].mode, "mode = %s gave %o", cases[i].text,
                     cfg.socket_mode);
        vf_config_free(&cfg);
    }
}

Test(config_ok, arrays_lists_and_numbers)
{
    vf_config cfg;
    char err[512];
    /* lists ( ) are accepted where arrays [ ] are, integers where a float is expected */
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "tenants = ( { uids = ( 5, 6 ); egress = { ports = ( 443 ); deny = ( \"10.1.0.0/16\" ); };\n"
                         "  providers = ( { name = \"d-1\"; kind = \"direct\"; cost = 2; } ); } );\n"),
                 0, "%s", err);
    cr_assert_str_eq(cfg.tenants[0].name, "default");
    cr_assert_eq(cfg.tenants[0].n_uids, 2);
    cr_assert_eq(cfg.tenants[0].egress.ports[0], 443);
    cr_assert_float_eq(cfg.tenants[0].providers[0].cost_per_call, 2.0, 1e-12);
    vf_config_free(&cfg);
}

/* Extra markers (and the old interstitial_markers) add to the built-in
 * families: an empty list leaves detection on; a tenant switches families off. */
Test(config_ok, extra_markers_add_and_tenants_disable_families)
{
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "classify = { interstitial_markers = [ ]; };\n"), 0,
                 "%s", err);
    cr_assert_eq(cfg.n_markers, 0, "[] adds nothing and switches nothing off");
    vf_config_free(&cfg);
    cr_assert_eq(fx_load(&cfg, err, sizeof err,
                         "classify = { extra_markers = [ \"paywall: members only\", \"wall\" ];\n"
                         "             interstitial_markers = [ \"old\" ]; };\n"
                         "tenants = ( { name = \"news\"; classify = { disable = [ \"paywall\", \"login_wall\" ]; }; } );\n"),
                 0, "%s", err);
    cr_assert_eq(cfg.n_markers, 3);
    cr_assert_str_eq(cfg.markers[0], "paywall: members only");
    cr_assert_str_eq(cfg.markers[2], "old");
    cr_assert_eq(cfg.tenants[0].classify_disabled, VF_WALL_BIT(VF_WALL_PAYWALL) | VF_WALL_BIT(VF_WALL_LOGIN));
    vf_config_free(&cfg);
}

/* The loader's family names are vf_wall's, in vf_wall's order. */
Test(config_ok, disable_names_follow_the_wall_enum)
{
    size_t i = 0;
    for (; vf_cfg_wall_families[i]; i++) {
        cr_expect_str_eq(vf_cfg_wall_families[i], vf_wall_name((vf_wall)(i + 1)));
        cr_expect(vf_wall_can_disable((vf_wall)(i + 1)));
    }
    cr_expect_not(vf_wall_can_disable((vf_wall)(i + 1)), "every family that can be disabled is listed");
}

Test(config_ok, include_resolves_next_to_config)
{
    static const char good[] = "tenants = ( { name = \"inc\"; } );\n";
    static const char bad[] = "\n\ntenants = ( { name = 7; } );\n";
    char *inc = fx_write("tenants.inc", good, strlen(good), 0644);
    vf_config cfg;
    char err[512];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "@include \"tenants.inc\"\n"), 0, "%s", err);
    cr_assert_str_eq(cfg.tenants[0].name, "inc");
    vf_config_free(&cfg);

    /* An error inside the included file names that file. */
    free(fx_write("bad.inc", bad, strlen(bad), 0644));
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "@include \"bad.inc\"\n"), -1);
    char want[256];
    snprintf(want, sizeof want, "bad.inc:3: tenants[0].name: must be a string");
    cr_assert(strstr(err, want), "got: %s", err);
    free(inc);
}

Test(config_ok, ca_bundle_missing_is_reported_not_fatal)
{
    /* The internal reader reports absence separately so only the built-in
     * default may be missing; an explicit ca_file must exist (see errors). */
    uint8_t *pem = NULL;
    size_t len = 0;
    bool missing = false;
    char why[256];
    char path[256];
    snprintf(path, sizeof path, "%s/none.pem", fx_dir);
    cr_assert_eq(vf_cfg_read_ca(path, &pem, &len, &missing, why, sizeof why), 0);
    cr_assert(missing);
    cr_assert_null(pem);
}

Test(config_ok, worker_require_lists_layers)
{
    vf_config cfg;
    char err[1024];
    cr_assert_eq(fx_load(&cfg, err, sizeof err, "worker = { require = [ \"seccomp\", \"namespaces\" ]; };\n"), 0,
                 "%s", err);
    cr_assert_eq(cfg.n_required_layers, 2);
    cr_assert_str_eq(cfg.required_layers[0], "seccomp");
    cr_assert_str_eq(cfg.required_layers[1], "namespaces");
    vf_config_free(&cfg);
    fx_expect_error(1, "worker.require", "worker = { require = [ \"Bad Name\" ]; };\n");
    fx_expect_error(1, "worker.require", "worker = { require = \"seccomp\"; };\n");
}
