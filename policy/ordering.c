#include "policy/ordering.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *vf_order_strategy_name(vf_order_strategy s)
{
    switch (s) {
    case VF_ORDER_STATIC: return "static";
    case VF_ORDER_DOMAIN: return "domain";
    case VF_ORDER_COST: return "cost";
    case VF_ORDER_HEALTH: return "health";
    }
    return "unknown";
}

int vf_order_strategy_parse(const char *name, vf_order_strategy *out)
{
    static const vf_order_strategy all[] = { VF_ORDER_STATIC, VF_ORDER_DOMAIN, VF_ORDER_COST, VF_ORDER_HEALTH };
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name, vf_order_strategy_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

/* ---- config ---- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static ptrdiff_t provider_named(const vf_provider_config *p, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (p[i].name && strcmp(p[i].name, name) == 0)
            return (ptrdiff_t)i;
    return -1;
}

static int validate_rule(const vf_domain_rule *r, size_t k, const vf_provider_config *providers,
                         size_t n_providers, char *err, size_t errlen)
{
    if (r->n_patterns < 1 || r->n_patterns > VF_ORDER_MAX_PATTERNS)
        return fail(err, errlen, "rules[%zu].match: needs 1..%u host patterns", k, VF_ORDER_MAX_PATTERNS);
    for (size_t i = 0; i < r->n_patterns; i++)
        if (!vf_host_pattern_valid(r->patterns[i]))
            return fail(err, errlen, "rules[%zu].match[%zu]: \"%s\" is not a host pattern (\"host\", \"*.host\" or \"*\")",
                        k, i, r->patterns[i] ? r->patterns[i] : "");
    if (r->n_providers < 1 || r->n_providers > VF_ORDER_MAX)
        return fail(err, errlen, "rules[%zu].providers: needs 1..%u provider names", k, VF_ORDER_MAX);
    for (size_t i = 0; i < r->n_providers; i++) {
        if (provider_named(providers, n_providers, r->providers[i]) < 0)
            return fail(err, errlen, "rules[%zu].providers[%zu]: unknown provider \"%s\"", k, i,
                        r->providers[i] ? r->providers[i] : "");
        for (size_t j = 0; j < i; j++)
            if (strcmp(r->providers[j], r->providers[i]) == 0)
                return fail(err, errlen, "rules[%zu].providers[%zu]: \"%s\" is listed twice", k, i, r->providers[i]);
    }
    return 0;
}

int vf_order_config_validate(const vf_order_config *cfg, const vf_provider_config *providers,
                             size_t n_providers, char *err, size_t errlen)
{
    if (!cfg)
        return 0;
    if ((int)cfg->strategy < (int)VF_ORDER_STATIC || (int)cfg->strategy > (int)VF_ORDER_HEALTH)
        return fail(err, errlen, "strategy: must be \"static\", \"domain\", \"cost\" or \"health\"");
    if (n_providers > VF_ORDER_MAX)
        return fail(err, errlen, "providers: at most %u", VF_ORDER_MAX);
    /* Settings another strategy would silently ignore are mistakes. */
    if (cfg->strategy != VF_ORDER_DOMAIN && (cfg->n_rules > 0 || cfg->drop_unlisted))
        return fail(err, errlen, "rules/unlisted: only used with strategy \"domain\"");
    if (cfg->strategy != VF_ORDER_COST && cfg->has_budget)
        return fail(err, errlen, "budget: only used with strategy \"cost\"");
    if (cfg->strategy != VF_ORDER_HEALTH && cfg->by_latency)
        return fail(err, errlen, "by_latency: only used with strategy \"health\"");
    if (cfg->strategy == VF_ORDER_DOMAIN && cfg->n_rules == 0)
        return fail(err, errlen, "rules: strategy \"domain\" needs at least one rule");
    if (cfg->n_rules > VF_ORDER_MAX_RULES)
        return fail(err, errlen, "rules: at most %u", VF_ORDER_MAX_RULES);
    if (cfg->has_budget && !(isfinite(cfg->budget) && cfg->budget >= 0.0))
        return fail(err, errlen, "budget: must be a number >= 0");
    for (size_t k = 0; k < cfg->n_rules; k++)
        if (validate_rule(&cfg->rules[k], k, providers, n_providers, err, errlen) != 0)
            return -1;
    return 0;
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void vf_order_config_free(vf_order_config *cfg)
{
    if (!cfg)
        return;
    for (size_t k = 0; cfg->rules && k < cfg->n_rules; k++) {
        free_strings(cfg->rules[k].patterns, cfg->rules[k].n_patterns);
        free_strings(cfg->rules[k].providers, cfg->rules[k].n_providers);
    }
    free(cfg->rules);
    memset(cfg, 0, sizeof *cfg);
}

/* ---- the reason line ---- */

typedef struct {
    char *buf;
    size_t cap, len;
    bool truncated;
} reason_buf;

static void say(reason_buf *r, const char *fmt, ...)
{
    if (r->truncated)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->buf + r->len, r->cap - r->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= r->cap - r->len) {
        /* vsnprintf filled the buffer: keep what fits and say it was cut (names
         * are ASCII, so no character is split). */
        r->truncated = true;
        size_t keep = r->cap > 4 ? r->cap - 4 : 0;
        if (n >= 0 || r->len > keep)
            r->len = keep;
        snprintf(r->buf + r->len, r->cap - r->len, "...");
        r->len = strlen(r->buf);
        return;
    }
    r->len += (size_t)n;
}

static unsigned seconds_up(uint64_t ms)
{
    uint64_t s = (ms + 999) / 1000;
    return s > 0xFFFFFFFFu ? 0xFFFFFFFFu : (unsigned)s;
}

/* ---- base orders ---- */

static size_t identity(size_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = i;
    return n;
}

static double cost_of(const vf_provider_config *p)
{
    return isfinite(p->cost_per_call) && p->cost_per_call >= 0.0 ? p->cost_per_call : INFINITY;
}

/* Insertion sort: stable, and n <= 32. */
static void sort_by_cost(size_t *idx, size_t n, const vf_provider_config *p)
{
    for (size_t i = 1; i < n; i++) {
        size_t v = idx[i], j = i;
        while (j > 0 && cost_of(&p[idx[j - 1]]) > cost_of(&p[v])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

typedef struct {
    bool known;
    double ms;
} latency;

static bool slower(latency a, latency b)
{
    if (a.known != b.known)
        return !a.known;   /* unmeasured after measured: never pay to explore */
    return a.known && a.ms > b.ms;
}

static void sort_by_latency(size_t *idx, size_t n, const vf_order_input *in)
{
    latency lat[VF_ORDER_MAX];
    for (size_t i = 0; i < n; i++) {
        vf_circuit_snapshot s;
        vf_circuit_snapshot_get(in->circuits, in->tenant, in->providers[i].name, NULL, in->now_ms, &s);
        lat[i].known = s.has_latency;
        lat[i].ms = s.ewma_latency_ms;
    }
    for (size_t i = 1; i < n; i++) {
        size_t v = idx[i], j = i;
        while (j > 0 && slower(lat[idx[j - 1]], lat[v])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

static const vf_domain_rule *match_rule(const vf_order_config *cfg, const char *host, const char **pattern)
{
    for (size_t k = 0; k < cfg->n_rules; k++)
        for (size_t i = 0; i < cfg->rules[k].n_patterns; i++)
            if (vf_host_pattern_match(cfg->rules[k].patterns[i], host)) {
                *pattern = cfg->rules[k].patterns[i];
                return &cfg->rules[k];
            }
    return NULL;
}

static size_t domain_order(const vf_order_input *in, size_t *out, reason_buf *why)
{
    const char *pattern = NULL;
    const vf_domain_rule *rule = match_rule(in->cfg, in->host, &pattern);
    if (!rule) {
        say(why, "domain: no rule matched, configured order");
        return identity(out, in->n_providers);
    }
    bool used[VF_ORDER_MAX] = { false };
    size_t n = 0;
    for (size_t i = 0; i < rule->n_providers; i++) {
        /* Validated at load; a stale or repeated name is skipped, not trusted. */
        ptrdiff_t k = provider_named(in->providers, in->n_providers, rule->providers[i]);
        if (k >= 0 && !used[k]) {
            used[k] = true;
            out[n++] = (size_t)k;
        }
    }
    if (!in->cfg->drop_unlisted)
        for (size_t k = 0; k < in->n_providers; k++)
            if (!used[k])
                out[n++] = k;
    say(why, "domain rule '%s'%s", pattern, in->cfg->drop_unlisted ? " (unlisted providers dropped)" : "");
    return n;
}

/* ---- health gating ---- */

static void note_refusal(reason_buf *notes, const char *name, const vf_circuit_decision *d)
{
    const char *scope = d->domain_scoped ? " for this host" : "";
    if (d->state == VF_CIRCUIT_OPEN && d->retry_in_ms > 0)
        say(notes, "%sskipped '%s'%s (circuit open, %u s cooldown left)", notes->len ? "; " : "", name,
            scope, seconds_up(d->retry_in_ms));
    else
        say(notes, "%sskipped '%s'%s (circuit half-open, probe in flight)", notes->len ? "; " : "", name,
            scope);
}

static void note_probe(reason_buf *notes, const char *name, const vf_circuit_decision *d)
{
    say(notes, "%sprobing '%s'%s (half-open)", notes->len ? "; " : "", name,
        d->domain_scoped ? " for this host" : "");
}

int vf_order_compute(const vf_order_input *in, vf_order *out)
{
    memset(out, 0, sizeof *out);
    reason_buf why = { out->reason, sizeof out->reason, 0, false };
    if (!in || (in->n_providers > 0 && !in->providers)) {
        say(&why, "ordering: no input");
        return -1;
    }
    if (in->n_providers > VF_ORDER_MAX) {
        say(&why, "ordering: %zu providers exceed the limit of %u", in->n_providers, VF_ORDER_MAX);
        return -1;
    }
    static const vf_order_config static_cfg = { .strategy = VF_ORDER_STATIC };
    const vf_order_config *cfg = in->cfg ? in->cfg : &static_cfg;
    bool gate = cfg->strategy == VF_ORDER_HEALTH || cfg->skip_unhealthy;
    if (gate && !in->circuits) {
        say(&why, "ordering: health gating needs a circuit registry");
        return -1;
    }
    vf_order_input view = *in;
    view.cfg = cfg;

    size_t base[VF_ORDER_MAX];
    size_t nb = 0;
    switch (cfg->strategy) {
    case VF_ORDER_DOMAIN:
        nb = domain_order(&view, base, &why);
        break;
    case VF_ORDER_COST:
        nb = identity(base, in->n_providers);
        sort_by_cost(base, nb, in->providers);
        if (cfg->has_budget)
            say(&why, "cost: cheapest first (budget %g)", cfg->budget);
        else
            say(&why, "cost: cheapest first");
        break;
    case VF_ORDER_HEALTH:
        nb = identity(base, in->n_providers);
        if (cfg->by_latency)
            sort_by_latency(base, nb, &view);
        break;
    case VF_ORDER_STATIC:
    default:
        nb = identity(base, in->n_providers);
        say(&why, "static: configured order");
        break;
    }

    char notes_text[VF_ORDER_REASON_MAX];
    notes_text[0] = '\0';
    reason_buf notes = { notes_text, sizeof notes_text, 0, false };
    char over_text[VF_ORDER_REASON_MAX];
    over_text[0] = '\0';
    reason_buf over = { over_text, sizeof over_text, 0, false };
    /* Slack for binary fractions: 0.001 + 0.002 must fit a budget of 0.003. */
    double budget_cap = cfg->budget + fabs(cfg->budget) * 1e-9 + 1e-12;
    double spent = 0.0;
    out->has_tickets = in->circuits != NULL;
    for (size_t i = 0; i < nb; i++) {
        if (in->limit && out->n >= in->limit)
            break;
        const vf_provider_config *p = &in->providers[base[i]];
        double cost = cost_of(p);
        if (cfg->strategy == VF_ORDER_COST && cfg->has_budget && spent + cost > budget_cap) {
            say(&over, "%s'%s'", over.len ? ", " : "", p->name);
            continue;   /* sorted ascending: everything after is over budget too */
        }
        vf_circuit_ticket *t = &out->ticket[out->n];
        if (gate) {
            vf_circuit_decision d;
            if (!vf_circuit_admit(in->circuits, in->tenant, p->name, in->host, in->now_ms, t, &d)) {
                note_refusal(&notes, p->name, &d);
                continue;
            }
            if (d.probe)
                note_probe(&notes, p->name, &d);
        } else if (in->circuits) {
            vf_circuit_ticket_observe(t, in->tenant, p->name, in->host);
        }
        out->index[out->n++] = base[i];
        spent += cost;
    }

    if (over.len) {
        /* "cost: cheapest first (budget 0.01)" -> "... (budget 0.01; over budget: 'b', 'c')" */
        if (why.len > 0 && out->reason[why.len - 1] == ')')
            why.len--;
        say(&why, "; over budget: %s)", over_text);
    }
    if (cfg->strategy == VF_ORDER_HEALTH) {
        if (cfg->by_latency)
            say(&why, "health: fastest first by EWMA latency%s%s", notes.len ? "; " : "", notes_text);
        else if (notes.len)
            say(&why, "health: %s", notes_text);
        else
            say(&why, "health: configured order, no circuit open");
    } else if (notes.len) {
        say(&why, "; health: %s", notes_text);
    }
    return 0;
}

void vf_order_release_unused(vf_order *order, vf_circuit_registry *circuits)
{
    if (!order || !order->has_tickets)
        return;
    for (size_t i = 0; i < order->n; i++)
        vf_circuit_release(circuits, &order->ticket[i]);
}
