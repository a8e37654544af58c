/* verifetchd configuration: built-in default and file loading (top-level
 * sections and cross-tenant rules). Tenants and providers are parsed in
 * config_tenant.c / config_provider.c, default paths live in config_paths.c. */
#include "policy/config.h"
#include "policy/config_internal.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <fcntl.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define TEST_HOOK_MAX    64u
#define SOCKET_PATH_MAX  (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

static const char *const root_members[] = { "listen", "worker", "classify", "tenants", "state", NULL };
static const char *const listen_members[] = { "socket", "mode", "tcp", NULL };
static const char *const worker_members[] = {
    "path", "ca_file", "max_concurrent", "test_hook", "require", "zygote", "zygote_max_workers",
    "zygote_max_age_s", "subordinate_uid", NULL,
};

/* ---- shared pieces of the default and the loaded config ---- */

static int set_base(vf_config *cfg)
{
    cfg->socket_path = vf_default_socket_path();
    cfg->socket_mode = 0660;
    cfg->worker_path = vf_default_worker_path();
    cfg->ca_file = strdup(VF_DEFAULT_CA_FILE);
    cfg->max_concurrent = VF_DEFAULT_MAX_CONCURRENT;
    cfg->zygote = true;
    cfg->zygote_max_workers = VF_DEFAULT_ZYGOTE_MAX_WORKERS;
    cfg->zygote_max_age_s = VF_DEFAULT_ZYGOTE_MAX_AGE_S;
    cfg->subordinate_uid = true;
    return cfg->socket_path && cfg->worker_path && cfg->ca_file ? 0 : -1;
}

static int add_default_tenant(vf_config *cfg)
{
    cfg->tenants = calloc(1, sizeof *cfg->tenants);
    if (!cfg->tenants)
        return -1;
    cfg->n_tenants = 1;
    return vf_cfg_default_tenant(&cfg->tenants[0]);
}

/* A configured CA file must exist; the built-in default may be absent (HTTPS
 * then fails later with a clear TLS error). */
static int load_ca(vf_cfg_ctx *ctx, vf_config *cfg, const config_setting_t *configured)
{
    char why[VF_CFG_STRING_MAX + 128];
    bool missing = false;
    if (vf_cfg_read_ca(cfg->ca_file, &cfg->ca_pem, &cfg->ca_pem_len, &missing, why,
                       sizeof why) != 0)
        return configured ? vf_cfg_fail(ctx, configured, "worker.ca_file", "%s", why)
                          : vf_cfg_fail_plain(ctx, "%s", why);
    if (missing && configured)
        return vf_cfg_fail(ctx, configured, "worker.ca_file", "CA file %s does not exist",
                           cfg->ca_file);
    return 0;
}

int vf_config_default(vf_config *out, char *err, size_t errlen)
{
    vf_cfg_ctx ctx = { .path = "built-in default", .err = err, .errlen = errlen };
    memset(out, 0, sizeof *out);
    if (set_base(out) != 0 || add_default_tenant(out) != 0) {
        vf_config_free(out);
        return vf_cfg_fail_plain(&ctx, "out of memory");
    }
    if (load_ca(&ctx, out, NULL) != 0) {
        vf_config_free(out);
        return -1;
    }
    return 0;
}

/* ---- top-level sections ---- */

static int replace_string(vf_cfg_ctx *ctx, const config_setting_t *at, const char *where,
                          const char *value, char **slot)
{
    char *copy = strdup(value);
    if (!copy)
        return vf_cfg_fail(ctx, at, where, "out of memory");
    free(*slot);
    *slot = copy;
    return 0;
}

/* libconfig 1.5 has no octal literals: "mode = 0660" arrives as decimal 660,
 * so decimal digits are read as the octal digits the admin wrote. Hex is literal. */
static int parse_mode(vf_cfg_ctx *ctx, const config_setting_t *at, unsigned *out)
{
    long long raw;
    if (vf_cfg_get_int(ctx, at, "listen.mode", 0, 0x7fffffffLL, &raw) != 0)
        return -1;
    long long mode = 0;
    if (config_setting_get_format(at) == CONFIG_FORMAT_HEX) {
        mode = raw;
    } else {
        long long place = 1;
        for (long long rest = raw; rest > 0; rest /= 10, place *= 8) {
            if (rest % 10 > 7 || place > 0777)
                return vf_cfg_fail(ctx, at, "listen.mode",
                                   "must be octal permission bits such as 0660 (0..0777)");
            mode += (rest % 10) * place;
        }
    }
    if (mode > 0777)
        return vf_cfg_fail(ctx, at, "listen.mode", "must be octal permission bits such as 0660 (0..0777)");
    *out = (unsigned)mode;
    return 0;
}

static int parse_listen(vf_cfg_ctx *ctx, const config_setting_t *s, vf_config *cfg)
{
    if (vf_cfg_want_group(ctx, s, "listen") != 0 ||
        vf_cfg_check_members(ctx, s, "listen", listen_members) != 0)
        return -1;
    const config_setting_t *at;
    if ((at = config_setting_get_member(s, "socket"))) {
        const char *path;
        if (vf_cfg_get_string(ctx, at, "listen.socket", VF_CFG_STRING_MAX, &path) != 0)
            return -1;
        if (path[0] != '/' || strlen(path) > SOCKET_PATH_MAX)
            return vf_cfg_fail(ctx, at, "listen.socket",
                               "must be an absolute path of at most %zu bytes", SOCKET_PATH_MAX);
        if (replace_string(ctx, at, "listen.socket", path, &cfg->socket_path) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "mode")) && parse_mode(ctx, at, &cfg->socket_mode) != 0)
        return -1;
    if ((at = config_setting_get_member(s, "tcp")))
        return vf_cfg_parse_tcp_listen(ctx, at, cfg);
    return 0;
}

static bool valid_test_hook(const char *hook)
{
    size_t n = strlen(hook);
    if (n == 0 || n > TEST_HOOK_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((hook[i] >= 'a' && hook[i] <= 'z') || (hook[i] >= '0' && hook[i] <= '9') ||
              hook[i] == '_'))
            return false;
    return true;
}

/* Layer names are checked against the worker's list by the broker at start
 * (it probes what actually applies); here only their shape. */
static int parse_required_layers(vf_cfg_ctx *ctx, const config_setting_t *at, vf_config *cfg)
{
    int n;
    if (vf_cfg_want_seq(ctx, at, "worker.require", 16, &n) != 0)
        return -1;
    cfg->required_layers = calloc((size_t)n + 1, sizeof *cfg->required_layers);
    if (!cfg->required_layers)
        return vf_cfg_fail(ctx, at, "worker.require", "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(at, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        const char *name;
        vf_cfg_index(path, "worker.require", i);
        if (vf_cfg_get_string(ctx, e, path, 32, &name) != 0)
            return -1;
        if (!valid_test_hook(name))
            return vf_cfg_fail(ctx, e, path, "'%s' is not a layer name", name);
        cfg->required_layers[i] = strdup(name);
        if (!cfg->required_layers[i])
            return vf_cfg_fail(ctx, e, path, "out of memory");
        cfg->n_required_layers = (size_t)i + 1;
    }
    return 0;
}

static int parse_worker(vf_cfg_ctx *ctx, const config_setting_t *s, vf_config *cfg,
                        const config_setting_t **ca_at)
{
    if (vf_cfg_want_group(ctx, s, "worker") != 0 ||
        vf_cfg_check_members(ctx, s, "worker", worker_members) != 0)
        return -1;
    const config_setting_t *at;
    const char *text;
    if ((at = config_setting_get_member(s, "path"))) {
        if (vf_cfg_get_string(ctx, at, "worker.path", VF_CFG_STRING_MAX, &text) != 0)
            return -1;
        struct stat st;
        if (text[0] != '/')
            return vf_cfg_fail(ctx, at, "worker.path", "must be an absolute path");
        if (stat(text, &st) != 0 || !S_ISREG(st.st_mode) || access(text, X_OK) != 0)
            return vf_cfg_fail(ctx, at, "worker.path", "%s is not an executable file", text);
        if (replace_string(ctx, at, "worker.path", text, &cfg->worker_path) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "ca_file"))) {
        if (vf_cfg_get_string(ctx, at, "worker.ca_file", VF_CFG_STRING_MAX, &text) != 0)
            return -1;
        if (text[0] == '\0')
            return vf_cfg_fail(ctx, at, "worker.ca_file", "must not be empty");
        if (replace_string(ctx, at, "worker.ca_file", text, &cfg->ca_file) != 0)
            return -1;
        *ca_at = at;
    }
    if ((at = config_setting_get_member(s, "max_concurrent"))) {
        long long v;
        if (vf_cfg_get_int(ctx, at, "worker.max_concurrent", 1, 1024, &v) != 0)
            return -1;
        cfg->max_concurrent = (unsigned)v;
    }
    if ((at = config_setting_get_member(s, "test_hook"))) {
        if (vf_cfg_get_string(ctx, at, "worker.test_hook", TEST_HOOK_MAX + 1, &text) != 0)
            return -1;
        if (!valid_test_hook(text))
            return vf_cfg_fail(ctx, at, "worker.test_hook",
                               "must be 1-%u characters of a-z, 0-9, '_'", TEST_HOOK_MAX);
        if (replace_string(ctx, at, "worker.test_hook", text, &cfg->test_hook) != 0)
            return -1;
    }
    if ((at = config_setting_get_member(s, "zygote")) &&
        vf_cfg_get_bool(ctx, at, "worker.zygote", &cfg->zygote) != 0)
        return -1;
    long long v;
    if ((at = config_setting_get_member(s, "zygote_max_workers"))) {
        if (vf_cfg_get_int(ctx, at, "worker.zygote_max_workers", 0, VF_MAX_ZYGOTE_MAX_WORKERS, &v) != 0)
            return -1;
        cfg->zygote_max_workers = (unsigned)v;
    }
    if ((at = config_setting_get_member(s, "zygote_max_age_s"))) {
        if (vf_cfg_get_int(ctx, at, "worker.zygote_max_age_s", 0, VF_MAX_ZYGOTE_MAX_AGE_S, &v) != 0)
            return -1;
        cfg->zygote_max_age_s = (unsigned)v;
    }
    if ((at = config_setting_get_member(s, "subordinate_uid"))) {
        if (vf_cfg_get_string(ctx, at, "worker.subordinate_uid", 8, &text) != 0)
            return -1;
        if (strcmp(text, "auto") != 0 && strcmp(text, "off") != 0)
            return vf_cfg_fail(ctx, at, "worker.subordinate_uid", "must be \"auto\" or \"off\"");
        cfg->subordinate_uid = strcmp(text, "auto") == 0;
    }
    if ((at = config_setting_get_member(s, "require")))
        return parse_required_layers(ctx, at, cfg);
    return 0;
}

/* Rules that span tenants: unique names, a uid or token maps to one tenant,
 * one unix catch-all (no uids, no tokens). */
static int check_against_earlier(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                                 const vf_config *cfg, size_t i)
{
    const vf_tenant_config *t = &cfg->tenants[i];
    char path[VF_CFG_PATH_MAX];
    for (size_t k = 0; k < i; k++) {
        const vf_tenant_config *prev = &cfg->tenants[k];
        if (strcmp(prev->name, t->name) == 0) {
            const config_setting_t *at = config_setting_get_member(s, "name");
            vf_cfg_join(path, where, "name");
            return vf_cfg_fail(ctx, at ? at : s, path, "duplicate tenant name \"%s\" (also tenants[%zu])",
                               t->name, k);
        }
        if (vf_tenant_serves_any_peer(t) && vf_tenant_serves_any_peer(prev))
            return vf_cfg_fail(ctx, s, where,
                               "only one tenant may leave uids empty without tokens (tenants[%zu] "
                               "\"%s\" already serves any peer)", k, prev->name);
        if (vf_cfg_check_tokens_unique(ctx, s, where, t, prev, k) != 0)
            return -1;
        for (size_t u = 0; u < t->n_uids; u++)
            for (size_t v = 0; v < prev->n_uids; v++)
                if (t->uids[u] == prev->uids[v]) {
                    const config_setting_t *uids = config_setting_get_member(s, "uids");
                    const config_setting_t *at = config_setting_get_elem(uids, (unsigned)u);
                    char uids_path[VF_CFG_PATH_MAX];
                    vf_cfg_join(uids_path, where, "uids");
                    vf_cfg_index(path, uids_path, (int)u);
                    return vf_cfg_fail(ctx, at ? at : s, path,
                                       "uid %u is already mapped to tenant \"%s\"",
                                       (unsigned)t->uids[u], prev->name);
                }
    }
    return 0;
}

static int parse_tenants(vf_cfg_ctx *ctx, const config_setting_t *s, vf_config *cfg)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, "tenants", VF_CFG_LIST_MAX, &n) != 0)
        return -1;
    if (n == 0)
        return vf_cfg_fail(ctx, s, "tenants", "must list at least one tenant");
    cfg->tenants = calloc((size_t)n, sizeof *cfg->tenants);
    if (!cfg->tenants)
        return vf_cfg_fail(ctx, s, "tenants", "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(s, (unsigned)i);
        char where[VF_CFG_PATH_MAX];
        vf_cfg_index(where, "tenants", i);
        if (vf_cfg_want_group(ctx, elem, where) != 0)
            return -1;
        cfg->n_tenants = (size_t)i + 1;
        if (vf_cfg_parse_tenant(ctx, elem, where, &cfg->tenants[i]) != 0 ||
            check_against_earlier(ctx, elem, where, cfg, (size_t)i) != 0)
            return -1;
    }
    return 0;
}

/* ---- loading ---- */

/* Reads the file ourselves (regular file, size cap) so the overflow scan and
 * libconfig see the same bytes. */
static int read_config_text(vf_cfg_ctx *ctx, char **text, size_t *len)
{
    int fd = open(ctx->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return vf_cfg_fail_plain(ctx, "%s: %s", ctx->path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)VF_CFG_FILE_MAX) {
        close(fd);
        return vf_cfg_fail_plain(ctx, "%s: not a regular file of at most %u bytes", ctx->path,
                                 VF_CFG_FILE_MAX);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t used = 0;
    while (buf && used < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + used, (size_t)st.st_size - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    if (!buf || used != (size_t)st.st_size) {
        free(buf);
        return vf_cfg_fail_plain(ctx, "%s: read failed", ctx->path);
    }
    buf[used] = '\0';
    if (memchr(buf, '\0', used)) {
        free(buf);
        return vf_cfg_fail_plain(ctx, "%s: contains a NUL byte", ctx->path);
    }
    *text = buf;
    *len = used;
    return 0;
}

/* A TCP listener no token can pass would answer every caller 403. */
static int check_tcp_has_tokens(vf_cfg_ctx *ctx, const config_setting_t *root,
                                const vf_config *cfg)
{
    if (!cfg->tcp_listen)
        return 0;
    for (size_t i = 0; i < cfg->n_tenants; i++)
        if (cfg->tenants[i].n_tokens > 0)
            return 0;
    const config_setting_t *listen = config_setting_get_member(root, "listen");
    const config_setting_t *at = listen ? config_setting_get_member(listen, "tcp") : NULL;
    return vf_cfg_fail(ctx, at, "listen.tcp",
                       "no tenant has tokens, so every TCP caller would be refused; give a tenant "
                       "tokens = [ \"sha256:...\" ] or remove listen.tcp");
}

/* A tenant that names no concurrency quota gets ceil(max_concurrent / tenants)
 * when there are several: one tenant cannot take every worker slot. Alone it
 * is bounded by max_concurrent anyway. */
static void default_fair_shares(vf_config *cfg)
{
    if (cfg->n_tenants < 2)
        return;
    unsigned share = (unsigned)((cfg->max_concurrent + cfg->n_tenants - 1) / cfg->n_tenants);
    for (size_t i = 0; i < cfg->n_tenants; i++)
        if (!cfg->tenants[i].quota_concurrent_set)
            cfg->tenants[i].quota_concurrent = share ? share : 1;
}

static int parse_root(vf_cfg_ctx *ctx, const config_setting_t *root, vf_config *cfg)
{
    if (vf_cfg_check_members(ctx, root, "", root_members) != 0)
        return -1;
    const config_setting_t *at, *ca_at = NULL;
    if ((at = config_setting_get_member(root, "listen")) && parse_listen(ctx, at, cfg) != 0)
        return -1;
    if ((at = config_setting_get_member(root, "worker")) && parse_worker(ctx, at, cfg, &ca_at) != 0)
        return -1;
    if ((at = config_setting_get_member(root, "state")) && vf_cfg_parse_state(ctx, at, cfg) != 0)
        return -1;
    if ((at = config_setting_get_member(root, "classify")) && vf_cfg_parse_classify(ctx, at, cfg) != 0)
        return -1;
    if ((at = config_setting_get_member(root, "tenants"))) {
        if (parse_tenants(ctx, at, cfg) != 0)
            return -1;
    } else if (add_default_tenant(cfg) != 0) {
        return vf_cfg_fail_plain(ctx, "out of memory");
    }
    if (check_tcp_has_tokens(ctx, root, cfg) != 0)
        return -1;
    default_fair_shares(cfg);
    return load_ca(ctx, cfg, ca_at);
}

int vf_config_load(const char *path, vf_config *out, char *err, size_t errlen)
{
    vf_cfg_ctx ctx = { .path = path ? path : "(null)", .err = err, .errlen = errlen };
    memset(out, 0, sizeof *out);
    if (!path || !path[0])
        return vf_cfg_fail_plain(&ctx, "no config file given");

    char *text = NULL;
    size_t len = 0;
    if (read_config_text(&ctx, &text, &len) != 0)
        return -1;
    if (vf_cfg_lexcheck(&ctx, text, len) != 0) {
        free(text);
        return -1;
    }

    /* @include paths resolve next to the config file. */
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    config_t lc;
    config_init(&lc);
    if (slash) {
        slash[slash == dir ? 1 : 0] = '\0';
        config_set_include_dir(&lc, dir);
    }
    int rc = -1;
    if (!dir) {
        vf_cfg_fail_plain(&ctx, "out of memory");
    } else if (config_read_string(&lc, text) != CONFIG_TRUE) {
        const char *file = config_error_file(&lc) ? config_error_file(&lc) : path;
        vf_cfg_fail_plain(&ctx, "%s:%d: %s", file, config_error_line(&lc),
                          config_error_text(&lc) ? config_error_text(&lc) : "parse error");
    } else if (set_base(out) != 0) {
        vf_cfg_fail_plain(&ctx, "out of memory");
    } else {
        rc = parse_root(&ctx, config_root_setting(&lc), out);
    }
    config_destroy(&lc);
    free(dir);
    free(text);
    if (rc != 0)
        vf_config_free(out);
    return rc;
}

void vf_config_free(vf_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->socket_path);
    free(cfg->tcp_listen);
    free(cfg->worker_path);
    free(cfg->test_hook);
    for (size_t i = 0; i < cfg->n_required_layers; i++)
        free(cfg->required_layers[i]);
    free(cfg->required_layers);
    free(cfg->ca_file);
    free(cfg->ca_pem);
    for (size_t i = 0; i < cfg->n_markers && cfg->markers; i++)
        free(cfg->markers[i]);
    free(cfg->markers);
    for (size_t i = 0; i < cfg->n_tenants && cfg->tenants; i++)
        vf_cfg_tenant_free(&cfg->tenants[i]);
    free(cfg->tenants);
    vf_state_config_free(&cfg->state);
    memset(cfg, 0, sizeof *cfg);
}

int vf_config_add_self(vf_config *cfg, const struct sockaddr *sa)
{
    if (!cfg) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < cfg->n_tenants; i++)
        if (vf_egress_add_self(&cfg->tenants[i].egress, sa) != 0)
            return -1;
    return 0;
}
