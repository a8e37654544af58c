/* verifetchd: the privileged broker. Holds policy and provider keys, serves
 * the client API, and runs each fetch in a fresh confined worker. */
#include <curl/curl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <semaphore.h>

#include "broker/memory_tune.h"
#include "broker/broker_context.h"
#include "broker/reload_guard.h"
#include "broker/spawn/confinement.h"
#include "broker/api/capacity.h"
#include "broker/api/health.h"
#include "broker/spawn/worker_slot.h"
#include "broker/spawn/subuid_map.h"
#include "broker/spawn/zygote_client.h"
#include "broker/api/server.h"
#include "broker/api/socket_activation.h"
#include "broker/api/tcp_listener.h"
#include "policy/config.h"

static void usage(FILE *to)
{
    fprintf(to,
            "usage: verifetchd [--config FILE] [--socket PATH]\n"
            "       verifetchd --check-config FILE\n"
            "       verifetchd --version\n"
            "Without --config the built-in default serves one tenant with the direct provider.\n");
}

typedef struct {
    const char *config_path;
    const char *socket_path;
    bool check_only;
} options;

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if ((strcmp(a, "--config") == 0 || strcmp(a, "--check-config") == 0) && has_value) {
            o->check_only = strcmp(a, "--check-config") == 0;
            o->config_path = argv[++i];
        } else if (strcmp(a, "--socket") == 0 && has_value) {
            o->socket_path = argv[++i];
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("verifetchd %s\n", VERIFETCH_VERSION);
            exit(0);
        } else {
            fprintf(stderr, "verifetchd: unknown or incomplete argument '%s'\n", a);
            usage(stderr);
            return -1;
        }
    }
    return 0;
}

static vf_config *load_config(const options *o)
{
    vf_config *cfg = calloc(1, sizeof *cfg);
    char err[1024];
    if (!cfg) {
        fprintf(stderr, "verifetchd: out of memory\n");
        return NULL;
    }
    int rc = o->config_path ? vf_config_load(o->config_path, cfg, err, sizeof err)
                            : vf_config_default(cfg, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "verifetchd: %s\n", err);
        free(cfg);
        return NULL;
    }
    if (o->socket_path) {
        char *p = strdup(o->socket_path);
        if (!p) {
            vf_config_free(cfg);
            free(cfg);
            return NULL;
        }
        free(cfg->socket_path);
        cfg->socket_path = p;
    }
    return cfg;
}

static void describe(const vf_config *cfg)
{
    printf("config ok: %zu tenant%s, worker %s\n", cfg->n_tenants, cfg->n_tenants == 1 ? "" : "s",
           cfg->worker_path);
    for (size_t t = 0; t < cfg->n_tenants; t++) {
        const vf_tenant_config *tc = &cfg->tenants[t];
        printf("  tenant %s: %zu provider%s, attempt ceiling %u, timeout %u ms\n", tc->name,
               tc->n_providers, tc->n_providers == 1 ? "" : "s", tc->attempt_ceiling, tc->timeout_ms);
    }
}

/* The broker's own TCP listener is never a fetch target, for any tenant.
 * The bound address (port 0 resolved) is recorded once the socket exists. */
static struct sockaddr_storage self_addr;
static bool have_self_addr;

static void register_self(vf_config *cfg)
{
    if (cfg->tcp_listen)
        vf_config_add_self(cfg, (const struct sockaddr *)(have_self_addr ? &self_addr : &cfg->tcp_addr));
}

/* The fast spawn path: a zygote exec'd fresh from the worker executable
 * (so it never held broker memory or keys) forks pre-initialised workers with
 * the CA parsed once. Then one probe worker shows which confinement layers
 * really apply on this host, for /v1/health and worker.require. */
/* True when workers' RLIMIT_AS is clamped to the inherited hard limit. */
static bool start_workers(const vf_broker *b, vf_health *health)
{
    char err[256];
    vf_zygote_options zo = {
        .worker_path = b->cfg->worker_path, .ca_pem = b->cfg->ca_pem, .ca_pem_len = b->cfg->ca_pem_len,
        .pool = VF_ZYGOTE_DEFAULT_POOL, .max_workers = b->cfg->zygote_max_workers,
        .max_age_s = b->cfg->zygote_max_age_s,
    };
    vf_subuid_status sub;
    vf_subuid_setup(b->cfg->subordinate_uid, &sub);
    if (sub.active)
        fprintf(stderr, "verifetchd: workers run as subordinate uid %u, gid %u (a user namespace mapped by "
                "newuidmap/newgidmap), not the broker's %u\n", (unsigned)sub.worker_uid, (unsigned)sub.worker_gid,
                (unsigned)geteuid());
    else if (geteuid() != 0)
        fprintf(stderr, "verifetchd: workers run as the broker's own uid %u (%s); for a distinct uid install "
                "newuidmap/newgidmap (package uidmap) and give this user a range in /etc/subuid and "
                "/etc/subgid\n", (unsigned)geteuid(), sub.detail);
    if (!b->cfg->zygote)
        fprintf(stderr, "verifetchd: worker.zygote = false; workers are exec'd per fetch\n");
    else if (vf_zygote_start(&zo, err, sizeof err) != 0)
        fprintf(stderr, "verifetchd: no zygote (%s); workers are exec'd per fetch\n", err);
    uint64_t max_body = 4096;
    uint32_t timeout_ms = 1000;
    for (size_t t = 0; t < b->cfg->n_tenants; t++) {
        if (b->cfg->tenants[t].max_body_bytes > max_body)
            max_body = b->cfg->tenants[t].max_body_bytes;
        if (b->cfg->tenants[t].timeout_ms > timeout_ms)
            timeout_ms = b->cfg->tenants[t].timeout_ms;
    }
    uint64_t hard, wanted;
    bool as_clamped = vf_worker_as_clamped(max_body, &hard, &wanted);
    if (as_clamped)
        fprintf(stderr, "verifetchd: RLIMIT_AS hard limit %llu MiB is below the %llu MiB a worker wants for "
                "max_body_bytes %llu; workers are clamped to %llu MiB\n", (unsigned long long)(hard >> 20),
                (unsigned long long)(wanted >> 20), (unsigned long long)max_body, (unsigned long long)(hard >> 20));
    vf_worker_spec spec = { .path = b->cfg->worker_path, .required_layers = b->required_layers };
    vf_confinement_report rep;
    /* The real job limits, so a limit that makes lookups fail fails here. */
    vf_confinement_probe_limits(&spec, max_body, timeout_ms, &rep);
    health->probed = rep.ran;
    health->zygote = rep.zygote;
    health->layers = rep.layers;
    health->worker_uid = rep.worker_uid;
    health->uid_separated = rep.uid_separated;
    snprintf(health->probe_detail, sizeof health->probe_detail, "%s", rep.detail);
    if (rep.ran)
        fprintf(stderr, "verifetchd: workers confined by %s (spawn %s, %.2f ms); worker uid %u, %s\n",
                rep.layer_names, rep.zygote ? "zygote" : "exec", rep.spawn_ms, rep.worker_uid,
                rep.uid_separated ? "not the broker's" : "the broker's own (no uid separation)");
    else
        fprintf(stderr, "verifetchd: confinement probe failed: %s\n", rep.detail);
    return as_clamped;
}

/* How long a lookup begun before SIGTERM may still take: its tenant's
 * attempts back to back, plus the worker kill grace. */
static unsigned drain_budget_ms(vf_broker_holder *holder)
{
    vf_broker *b = vf_holder_acquire(holder);
    uint64_t worst = 0;
    for (size_t t = 0; t < b->cfg->n_tenants; t++) {
        const vf_tenant_config *tc = &b->cfg->tenants[t];
        uint64_t need = (uint64_t)tc->timeout_ms * tc->attempt_ceiling + 2000;
        if (need > worst)
            worst = need;
    }
    vf_broker_unref(b);
    return worst > 600000 ? 600000 : (unsigned)worst;
}

/* SIGHUP: build a complete new snapshot first; only a valid one replaces the
 * running policy, and in-flight lookups finish on the snapshot it took.
 * Settings that only apply at start-up keep their running values, each
 * named in a warning; worker.max_concurrent applies live. */
static void reload(const options *o, vf_broker_holder *holder, vf_runtime *rt, vf_server *server,
                   unsigned listeners)
{
    vf_config *cfg = load_config(o);
    if (!cfg) {
        fprintf(stderr, "verifetchd: reload rejected; keeping the running configuration\n");
        return;
    }
    char err[1024], changed[256];
    vf_broker *running = vf_holder_acquire(holder);
    int kept = vf_reload_keep_restart_settings(running->cfg, cfg, changed, sizeof changed);
    unsigned old_slots = running->cfg->max_concurrent;
    vf_broker_unref(running);
    vf_capacity cap;
    vf_capacity_plan(cfg->max_concurrent, listeners, &cap);
    cfg->max_concurrent = cap.slots;
    register_self(cfg);
    vf_broker *next = kept < 0 ? NULL : vf_broker_new(cfg, rt, err, sizeof err);
    if (!next) {
        fprintf(stderr, "verifetchd: reload rejected (%s); keeping the running configuration\n",
                kept < 0 ? "out of memory" : err);
        vf_config_free(cfg);
        free(cfg);
        return;
    }
    unsigned slots = next->cfg->max_concurrent;
    vf_zygote_set_rotation(next->cfg->zygote_max_workers, next->cfg->zygote_max_age_s);
    vf_holder_swap(holder, next);
    if (slots != old_slots) {
        vf_worker_slots_resize(&rt->worker_slots, slots);
        vf_server_resize(server, slots);
        fprintf(stderr, "verifetchd: worker.max_concurrent %u -> %u applied (worker slots and admission queue)\n",
                old_slots, slots);
    }
    if (kept > 0)
        fprintf(stderr, "verifetchd: configuration reloaded, except %d setting%s that need%s a restart: %s\n", kept,
                kept == 1 ? "" : "s", kept == 1 ? "s" : "", changed);
    else
        fprintf(stderr, "verifetchd: configuration reloaded\n");
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o) != 0)
        return 2;
    vf_memory_tune_startup();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "verifetchd: libcurl failed to initialise\n");
        return 1;
    }
    vf_config *cfg = load_config(&o);
    if (!cfg)
        return 1;
    if (o.check_only) {
        describe(cfg);
        vf_config_free(cfg);
        free(cfg);
        return 0;
    }
    char err[1024];
    /* Before any thread exists: it unsets LISTEN_* in our environment. */
    int inherited = vf_systemd_listen_fd(err, sizeof err);
    if (inherited == -2) {
        fprintf(stderr, "verifetchd: %s\n", err);
        return 1;
    }
    char inherited_path[108] = "";
    if (inherited >= 0)
        vf_unix_socket_path(inherited, inherited_path, sizeof inherited_path, err, sizeof err);
    int tcp_fd = -1;
    if (cfg->tcp_listen) {
        tcp_fd = vf_tcp_listen((const struct sockaddr *)&cfg->tcp_addr, cfg->tcp_addr_len, cfg->tcp_listen,
                               &self_addr, err, sizeof err);
        if (tcp_fd < 0) {
            fprintf(stderr, "verifetchd: %s\n", err);
            return 1;
        }
        have_self_addr = true;
    }
    register_self(cfg);

    /* Signals are taken synchronously by this thread; every thread started
     * after this inherits the block. */
    sigset_t wait_for;
    sigemptyset(&wait_for);
    sigaddset(&wait_for, SIGTERM);
    sigaddset(&wait_for, SIGINT);
    sigaddset(&wait_for, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &wait_for, NULL);
    signal(SIGPIPE, SIG_IGN);

    vf_capacity cap;
    vf_capacity_plan(cfg->max_concurrent, tcp_fd >= 0 ? 2 : 1, &cap);
    cfg->max_concurrent = cap.slots;
    static vf_runtime runtime;
    if (vf_runtime_init(&runtime, cfg->max_concurrent) != 0) {
        fprintf(stderr, "verifetchd: out of memory\n");
        return 1;
    }
    char *socket_path = strdup(cfg->socket_path);
    unsigned socket_mode = cfg->socket_mode;
    vf_broker *broker = socket_path ? vf_broker_new(cfg, &runtime, err, sizeof err) : NULL;
    if (!broker) {
        fprintf(stderr, "verifetchd: %s\n", socket_path ? err : "out of memory");
        vf_config_free(cfg);
        free(cfg);
        free(socket_path);
        return 1;
    }
    static vf_health health;
    bool as_clamped = start_workers(broker, &health);
    if (as_clamped && !health.probed) {
        fprintf(stderr, "verifetchd: RLIMIT_AS: workers cannot run under the inherited hard limit: %s\n",
                health.probe_detail);
        vf_zygote_stop();
        vf_broker_unref(broker);
        return 1;
    }
    if (health.probed && (broker->required_layers & ~health.layers)) {
        fprintf(stderr, "verifetchd: worker.require: %s\n", health.probe_detail);
        vf_zygote_stop();
        vf_broker_unref(broker);
        return 1;
    }
    vf_broker_holder holder;
    vf_holder_init(&holder, broker);
    vf_server_options so = {
        .socket_path = socket_path, .socket_mode = socket_mode, .inherited_fd = inherited,
        .tcp_fd = tcp_fd, .tcp_label = cfg->tcp_listen, .max_connections = cap.max_connections,
        .per_peer_connections = cap.per_peer, .worker_slots = cap.slots, .health = &health,
    };
    vf_server *server = vf_server_start(&holder, &so, err, sizeof err);
    if (!server) {
        fprintf(stderr, "verifetchd: %s\n", err);
        vf_holder_destroy(&holder);
        free(socket_path);
        return 1;
    }
    if (inherited >= 0)
        printf("verifetchd: listening on unix:%s\n", inherited_path[0] ? inherited_path : "?");
    else
        printf("verifetchd: listening on unix:%s\n", socket_path);
    if (have_self_addr) {
        char host[64] = "?", port[16] = "?";
        getnameinfo((struct sockaddr *)&self_addr, sizeof self_addr, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV);
        printf("verifetchd: listening on tcp:%s%s%s:%s (bearer tokens)\n", strchr(host, ':') ? "[" : "", host,
               strchr(host, ':') ? "]" : "", port);
    }
    fflush(stdout);

    for (;;) {
        int sig = 0;
        if (sigwait(&wait_for, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            reload(&o, &holder, &runtime, server, tcp_fd >= 0 ? 2 : 1);
            continue;
        }
        fprintf(stderr, "verifetchd: %s received, finishing in-flight lookups\n", strsignal(sig));
        break;
    }
    vf_server_stop(server, drain_budget_ms(&holder));
    vf_holder_destroy(&holder);
    vf_zygote_stop();
    vf_runtime_destroy(&runtime);
    free(socket_path);
    curl_global_cleanup();
    return 0;
}
