/* verifetchd configuration: the built-in default and the libconfig file format
 * (documented in packaging/verifetch.conf.example). Everything here lives only
 * in the broker; provider secrets never leave it. */
#ifndef VERIFETCH_CONFIG_H
#define VERIFETCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/ipc_messages.h"
#include "policy/circuit.h"
#include "policy/egress.h"
#include "policy/fleet_config.h"
#include "policy/ordering_config.h"

#define VF_DEFAULT_ATTEMPT_CEILING 3u
#define VF_MAX_ATTEMPT_CEILING     10u
#define VF_DEFAULT_TIMEOUT_MS      15000u
#define VF_DEFAULT_MAX_BODY        (8u * 1024u * 1024u)
#define VF_DEFAULT_MAX_CONCURRENT  64u
/* A zygote's workers share its address-space layout; a fresh zygote (fresh
 * ASLR) takes over after this many workers or seconds. Starting one costs
 * its set-up (CA parse, TLS warm-up, forking its pool): ~0.1 s of CPU with
 * the system CA bundle, i.e. ~0.1 ms per worker at 1000 workers, and 0.02 %
 * of a core when idle at 600 s. */
#define VF_DEFAULT_ZYGOTE_MAX_WORKERS 1000u
#define VF_DEFAULT_ZYGOTE_MAX_AGE_S   600u
#define VF_MAX_ZYGOTE_MAX_WORKERS     10000000u
#define VF_MAX_ZYGOTE_MAX_AGE_S       604800u
#define VF_DEFAULT_CA_FILE         "/etc/ssl/certs/ca-certificates.crt"
#define VF_QUOTA_MAX               100000u   /* concurrent and requests_per_minute */
#define VF_TOKEN_HASH_LEN          32u       /* SHA-256 */
#define VF_DEFAULT_USER_AGENT      "verifetch/" VERIFETCH_VERSION
#define VF_DEFAULT_ROBOTS_TTL_S    86400u    /* RFC 9309: a cached copy at most a day old */

typedef enum { VF_PROVIDER_DIRECT = 0, VF_PROVIDER_HTTP_API = 1 } vf_provider_kind;

typedef struct {
    char *name;
    vf_provider_kind kind;
    /* http_api only */
    char *endpoint;          /* URL template with "{url}" (percent-encoded target): exactly once for
                              * GET, at most once for POST (the body may carry it instead) */
    bool post;               /* method = "POST": the proxy sends body_template filled in */
    char *body_template;     /* compact JSON (policy/provider_body.h), POST only, else NULL */
    char **headers;          /* extra static "Name: value" lines sent upstream */
    size_t n_headers;
    char *cred_header;       /* header carrying the key, or NULL */
    char *cred_format;       /* header value template with "{key}", default "{key}" */
    char *cred_query;        /* query parameter carrying the key, or NULL */
    char *basic_pair;        /* HTTP Basic: credential.basic with the key in, "user:password"
                              * (sent as "Authorization: Basic <base64>"); secret like the key */
    char *key_origin;        /* "file /etc/..." or "env NAME": for messages, never the key */
    char *secret;            /* the loaded key; NULL for direct */
    vf_response_mode mode;   /* raw page or JSON with a pointer */
    char *json_pointer;      /* RFC 6901, when mode == VF_MODE_JSON */
    char *title_pointer;     /* RFC 6901, optional with VF_MODE_JSON: the page title (metadata) */
    uint32_t json_field;     /* VF_FIELD_* (ipc_messages.h): what the pointed-to string holds */
    double cost_per_call;    /* for cost ordering (issue 4), default 0 */
    vf_provider_quota quota; /* fleet-wide per key (broker/fleet); all-zero = unlimited */
} vf_provider_config;

/* A bearer token as the config stores it: only its SHA-256 ("sha256:<64 hex>"). */
typedef struct {
    uint8_t sha256[VF_TOKEN_HASH_LEN];
} vf_token_hash;

typedef struct {
    char *name;
    uid_t *uids;             /* unix peers that map to this tenant */
    size_t n_uids;
    vf_token_hash *tokens;   /* bearer tokens accepted on the TCP listener */
    size_t n_tokens;
    /* No uids and no tokens = the unix catch-all (any other peer); a tenant with
     * tokens but no uids is reachable over TCP only. See policy/tenant_auth.h. */
    /* Lookups in flight at once; 0 = unlimited. Absent with several tenants:
     * a fair share of worker.max_concurrent, so no tenant can take every
     * worker slot (issue 13 item 12). */
    unsigned quota_concurrent;
    bool quota_concurrent_set;      /* written in the file (0 included) */
    unsigned quota_rpm;             /* lookups started per minute; 0 = unlimited */
    vf_order_config ordering;       /* provider ordering strategy; all-zero = static */
    vf_circuit_params circuit;      /* health thresholds; all-zero = the defaults */
    bool has_circuit;               /* circuit was configured */
    vf_provider_config *providers;  /* in policy order */
    size_t n_providers;
    unsigned attempt_ceiling;       /* 1..VF_MAX_ATTEMPT_CEILING */
    unsigned timeout_ms;            /* per attempt, all hops included */
    uint64_t max_body_bytes;        /* decoded body cap */
    vf_egress_policy egress;
    unsigned classify_disabled;     /* classify.disable: bit (1 << n) per vf_wall family n */
    vf_cache_config cache;          /* lookup cache; disabled unless configured */
    char *user_agent;               /* what direct fetches send; NULL = VF_DEFAULT_USER_AGENT */
    bool robots_ignore;             /* robots = "ignore"; default obey (direct provider only) */
    unsigned robots_ttl_s;          /* how long a host's robots.txt is trusted; 0 = default */
} vf_tenant_config;

/* The tenant's User-Agent, and its robots.txt cache lifetime in seconds. */
const char *vf_tenant_user_agent(const vf_tenant_config *t);
unsigned vf_tenant_robots_ttl_s(const vf_tenant_config *t);

/* True for the unix catch-all: no uids and no tokens. A tenant with tokens but
 * no uids serves TCP callers only. The loader allows at most one catch-all. */
bool vf_tenant_serves_any_peer(const vf_tenant_config *tenant);

typedef struct {
    char *socket_path;       /* unix socket the client API listens on */
    unsigned socket_mode;    /* chmod of the socket, default 0660 */
    char *tcp_listen;        /* listen.tcp as written ("127.0.0.1:8089"); NULL = no TCP listener */
    struct sockaddr_storage tcp_addr;   /* its parsed loopback address (port 0 = kernel picks) */
    socklen_t tcp_addr_len;             /* for bind(); 0 when tcp_listen is NULL */
    char *worker_path;       /* verifetch-worker executable */
    char *test_hook;         /* worker.test_hook: only for the test-hook worker build; NULL otherwise */
    bool zygote;             /* worker.zygote: fork workers from a pre-initialised zygote (default true) */
    unsigned zygote_max_workers;  /* worker.zygote_max_workers: a fresh zygote after this many (0 = never) */
    unsigned zygote_max_age_s;    /* worker.zygote_max_age_s: ... or after this long (0 = never) */
    bool subordinate_uid;    /* worker.subordinate_uid "auto" (default): a non-root broker maps workers
                              * to a subordinate uid when newuidmap and /etc/subuid allow; "off" */
    char **required_layers;  /* worker.require: confinement layer names that must apply, else refuse to start */
    size_t n_required_layers;
    char *ca_file;           /* PEM bundle handed to workers for TLS */
    uint8_t *ca_pem;         /* its contents, read at load */
    size_t ca_pem_len;
    unsigned max_concurrent; /* workers alive at once, all tenants */
    char **markers;          /* classify.extra_markers (+ old interstitial_markers): ADDED to the
                              * built-in wall families; NULL = none */
    size_t n_markers;
    vf_tenant_config *tenants;
    size_t n_tenants;
    vf_state_config state;   /* shared store for a fleet; state.redis NULL = in-process only */
} vf_config;

/* Built-in default: one tenant "default" (any peer), provider "direct",
 * default egress denials, socket path from vf_default_socket_path(). */
int vf_config_default(vf_config *out, char *err, size_t errlen);

/* Load and validate a file. On error returns -1 and err reads like
 * "/etc/verifetch.conf:12: tenants[0].providers[1].kind: must be \"direct\" or \"http_api\"".
 * Unknown settings are errors. Key files that are group/world accessible are refused. */
int vf_config_load(const char *path, vf_config *out, char *err, size_t errlen);

void vf_config_free(vf_config *cfg);

/* Adds a listener address (vf_egress_add_self) to every tenant's egress policy,
 * e.g. the bound TCP listener after getsockname(). Returns 0 or -1 (errno). */
int vf_config_add_self(vf_config *cfg, const struct sockaddr *sa);

/* root: /run/verifetch/verifetch.sock; others: $XDG_RUNTIME_DIR/verifetch.sock or
 * /tmp/verifetch-<uid>/verifetch.sock. Returns a malloc'd string. */
char *vf_default_socket_path(void);

/* Worker next to the running broker in the build tree (../worker/verifetch-worker),
 * else the installed libexec path. malloc'd. */
char *vf_default_worker_path(void);

/* Families classify.disable accepts, in vf_wall order from 1 (NULL-terminated). */
extern const char *const vf_cfg_wall_families[];

#endif
