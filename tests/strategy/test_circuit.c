/* Circuit breaker: both opening rules, open/half-open/closed transitions with
 * injected time, exactly one probe, stale and lost probes, ungated
 * observations, host-scoped unusable_content circuits, EWMA latency. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "broker/judge/classify.h"
#include "policy/circuit.h"

/* The broker converts vf_outcome to vf_health_outcome with a cast. */
_Static_assert((int)VF_HEALTH_OK == (int)VF_OUTCOME_OK, "ok");
_Static_assert((int)VF_HEALTH_TRANSPORT_ERROR == (int)VF_OUTCOME_TRANSPORT_ERROR, "transport");
_Static_assert((int)VF_HEALTH_HTTP_ERROR == (int)VF_OUTCOME_HTTP_ERROR, "http");
_Static_assert((int)VF_HEALTH_UNUSABLE_CONTENT == (int)VF_OUTCOME_UNUSABLE_CONTENT, "unusable");
_Static_assert((int)VF_HEALTH_MALFORMED_RESPONSE == (int)VF_OUTCOME_MALFORMED_RESPONSE, "malformed");

#define T "acme"
#define P "primary"

static vf_circuit_params streak_params(unsigned threshold, uint64_t cooldown)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.failure_threshold = threshold;
    p.failure_rate = 0.0;
    p.cooldown_ms = cooldown;
    return p;
}

static vf_circuit_registry *registry(const vf_circuit_params *p)
{
    vf_circuit_registry *r = vf_circuit_registry_new(p);
    cr_assert_not_null(r);
    return r;
}

/* One admitted attempt with the given outcome. */
static void attempt(vf_circuit_registry *r, const char *host, vf_health_outcome o, uint64_t now)
{
    vf_circuit_ticket t;
    cr_assert(vf_circuit_admit(r, T, P, host, now, &t, NULL), "attempt at %llu should be admitted",
              (unsigned long long)now);
    vf_circuit_record(r, &t, o, -1, now);
}

static vf_circuit_state state_of(vf_circuit_registry *r, const char *host, uint64_t now)
{
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, host, now, &s);
    return s.state;
}

Test(circuit, opens_after_k_consecutive_failures)
{
    vf_circuit_params p = streak_params(3, 10000);
    vf_circuit_registry *r = registry(&p);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 100);
    attempt(r, NULL, VF_HEALTH_HTTP_ERROR, 200);
    cr_assert_eq(state_of(r, NULL, 200), VF_CIRCUIT_CLOSED, "two failures are below the threshold");
    attempt(r, NULL, VF_HEALTH_MALFORMED_RESPONSE, 300);
    vf_circuit_snapshot s;
    cr_assert(vf_circuit_snapshot_get(r, T, P, NULL, 300, &s));
    cr_assert_eq(s.state, VF_CIRCUIT_OPEN);
    cr_assert_eq(s.consecutive_failures, 3);
    cr_assert_eq(s.cooldown_left_ms, 10000);

    vf_circuit_ticket t;
    vf_circuit_decision d;
    cr_assert_not(vf_circuit_admit(r, T, P, NULL, 300, &t, &d));
    cr_assert_not(d.admitted);
    cr_assert_eq(d.state, VF_CIRCUIT_OPEN);
    cr_assert_eq(d.retry_in_ms, 10000);
    cr_assert_not(d.domain_scoped);
    vf_circuit_registry_free(r);
}

Test(circuit, a_success_breaks_the_streak)
{
    vf_circuit_params p = streak_params(3, 10000);
    vf_circuit_registry *r = registry(&p);
    vf_health_outcome seq[] = { VF_HEALTH_TRANSPORT_ERROR, VF_HEALTH_TRANSPORT_ERROR, VF_HEALTH_OK,
                                VF_HEALTH_TRANSPORT_ERROR, VF_HEALTH_TRANSPORT_ERROR };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
        attempt(r, NULL, seq[i], 10 * i);
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 100, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_CLOSED);
    cr_assert_eq(s.consecutive_failures, 2);
    cr_assert_eq(s.window_samples, 5);
    cr_assert_eq(s.window_failures, 4);
    vf_circuit_registry_free(r);
}

Test(circuit, opens_on_failure_rate_once_min_samples_seen)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.failure_threshold = 0;   /* rate rule only */
    p.window = 10;
    p.min_samples = 4;
    p.failure_rate = 0.5;
    vf_circuit_registry *r = registry(&p);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 1);
    attempt(r, NULL, VF_HEALTH_OK, 2);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 3);
    cr_assert_eq(state_of(r, NULL, 3), VF_CIRCUIT_CLOSED, "2/3 failed but only 3 samples (< 4)");
    attempt(r, NULL, VF_HEALTH_OK, 4);
    cr_assert_eq(state_of(r, NULL, 4), VF_CIRCUIT_CLOSED, "a success never opens");
    attempt(r, NULL, VF_HEALTH_HTTP_ERROR, 5);
    cr_assert_eq(state_of(r, NULL, 5), VF_CIRCUIT_OPEN, "3/5 >= 0.5 with no two failures in a row");
    vf_circuit_registry_free(r);
}

Test(circuit, failures_that_slid_out_of_the_window_are_forgotten)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.failure_threshold = 0;
    p.window = 4;
    p.min_samples = 4;
    p.failure_rate = 0.75;
    vf_circuit_registry *r = registry(&p);
    const char *seq = "FFSSSSFF";   /* 4 of 8 failed overall; last 4 = SSFF */
    for (size_t i = 0; seq[i]; i++)
        attempt(r, NULL, seq[i] == 'F' ? VF_HEALTH_TRANSPORT_ERROR : VF_HEALTH_OK, i);
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 10, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_CLOSED);
    cr_assert_eq(s.window_samples, 4);
    cr_assert_eq(s.window_failures, 2);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 11);   /* last 4 = SFFF = 0.75 */
    cr_assert_eq(state_of(r, NULL, 11), VF_CIRCUIT_OPEN);
    vf_circuit_registry_free(r);
}

Test(circuit, skipped_while_open_with_cooldown_left)
{
    vf_circuit_params p = streak_params(2, 10000);
    vf_circuit_registry *r = registry(&p);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 1000);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 1000);
    for (uint64_t now = 1000; now < 11000; now += 2500) {
        vf_circuit_ticket t;
        vf_circuit_decision d;
        cr_assert_not(vf_circuit_admit(r, T, P, "example.com", now, &t, &d), "admitted at %llu",
                      (unsigned long long)now);
        cr_assert_eq(d.retry_in_ms, 11000 - now);
        cr_assert(t.done, "a refused ticket needs no release");
    }
    vf_circuit_registry_free(r);
}

static vf_circuit_registry *opened_at(uint64_t when, uint64_t cooldown)
{
    vf_circuit_params p = streak_params(1, cooldown);
    vf_circuit_registry *r = registry(&p);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, when);
    cr_assert_eq(state_of(r, NULL, when), VF_CIRCUIT_OPEN);
    return r;
}

Test(circuit, half_open_after_cooldown_admits_exactly_one_probe)
{
    vf_circuit_registry *r = opened_at(1000, 5000);
    vf_circuit_ticket probe, other;
    vf_circuit_decision d;
    cr_assert_not(vf_circuit_admit(r, T, P, NULL, 5999, &probe, &d), "1 ms before the cooldown ends");
    cr_assert_eq(d.retry_in_ms, 1);
    cr_assert(vf_circuit_admit(r, T, P, NULL, 6000, &probe, &d));
    cr_assert(d.probe);
    cr_assert_eq(d.state, VF_CIRCUIT_HALF_OPEN);
    cr_assert_neq(probe.probe_gen, 0);
    for (int i = 0; i < 5; i++) {
        cr_assert_not(vf_circuit_admit(r, T, P, NULL, 6001 + (uint64_t)i, &other, &d),
                      "only one probe at a time");
        cr_assert_eq(d.state, VF_CIRCUIT_HALF_OPEN);
        cr_assert_eq(d.retry_in_ms, 0, "probe in flight: no time to promise");
    }
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 6002, &s);
    cr_assert(s.probe_in_flight);
    vf_circuit_registry_free(r);
}

Test(circuit, probe_success_closes_and_resets)
{
    vf_circuit_registry *r = opened_at(0, 5000);
    vf_circuit_ticket probe;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 5000, &probe, NULL));
    vf_circuit_record(r, &probe, VF_HEALTH_OK, 40, 5100);
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 5100, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_CLOSED);
    cr_assert_eq(s.consecutive_failures, 0);
    cr_assert_eq(s.window_samples, 0, "a closed circuit starts a fresh window");
    vf_circuit_ticket a, b;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 5101, &a, NULL));
    cr_assert(vf_circuit_admit(r, T, P, NULL, 5101, &b, NULL), "closed: concurrent attempts flow");
    cr_assert_eq(a.probe_gen, 0);
    vf_circuit_registry_free(r);
}

Test(circuit, probe_failure_reopens_with_a_fresh_cooldown)
{
    vf_circuit_registry *r = opened_at(0, 5000);
    vf_circuit_ticket probe, t;
    vf_circuit_decision d;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 7000, &probe, NULL));
    vf_circuit_record(r, &probe, VF_HEALTH_TRANSPORT_ERROR, -1, 8000);
    cr_assert_eq(state_of(r, NULL, 8000), VF_CIRCUIT_OPEN);
    cr_assert_not(vf_circuit_admit(r, T, P, NULL, 12999, &t, &d));
    cr_assert_eq(d.retry_in_ms, 1, "cooldown counts from the failed probe at 8000");
    cr_assert(vf_circuit_admit(r, T, P, NULL, 13000, &t, &d));
    cr_assert(d.probe);
    vf_circuit_registry_free(r);
}

Test(circuit, a_straggler_admitted_before_opening_does_not_settle_half_open)
{
    vf_circuit_params p = streak_params(2, 1000);
    vf_circuit_registry *r = registry(&p);
    vf_circuit_ticket straggler, probe;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 0, &straggler, NULL));
    vf_circuit_ticket late;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 0, &late, NULL));
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 10);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 20);
    vf_circuit_record(r, &straggler, VF_HEALTH_OK, -1, 500);
    cr_assert_eq(state_of(r, NULL, 500), VF_CIRCUIT_OPEN, "late success while open is ignored");
    vf_circuit_record(r, &late, VF_HEALTH_OK, -1, 1500);
    cr_assert_eq(state_of(r, NULL, 1500), VF_CIRCUIT_OPEN,
                 "even after the cooldown: it was admitted before the circuit opened");
    cr_assert(vf_circuit_admit(r, T, P, NULL, 1600, &probe, NULL));
    vf_circuit_ticket straggler2;
    /* A second straggler reports while the probe is out. */
    vf_circuit_ticket_observe(&straggler2, T, P, NULL);
    straggler2.gated = true;
    vf_circuit_record(r, &straggler2, VF_HEALTH_OK, -1, 1630);
    cr_assert_eq(state_of(r, NULL, 1630), VF_CIRCUIT_HALF_OPEN, "only the probe decides");
    vf_circuit_record(r, &probe, VF_HEALTH_OK, -1, 1640);
    cr_assert_eq(state_of(r, NULL, 1640), VF_CIRCUIT_CLOSED);
    vf_circuit_registry_free(r);
}

Test(circuit, released_probe_frees_the_slot)
{
    vf_circuit_registry *r = opened_at(0, 100);
    vf_circuit_ticket a, b;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 100, &a, NULL));
    cr_assert_not(vf_circuit_admit(r, T, P, NULL, 101, &b, NULL));
    vf_circuit_release(r, &a);
    vf_circuit_decision d;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 102, &b, &d), "released slot is free");
    cr_assert(d.probe);
    vf_circuit_record(r, &a, VF_HEALTH_OK, -1, 103);   /* released ticket: no-op */
    cr_assert_eq(state_of(r, NULL, 103), VF_CIRCUIT_HALF_OPEN);
    vf_circuit_registry_free(r);
}

Test(circuit, a_lost_probe_loses_its_slot_after_the_lease)
{
    vf_circuit_params p = streak_params(1, 100);
    p.probe_lease_ms = 1000;
    vf_circuit_registry *r = registry(&p);
    attempt(r, NULL, VF_HEALTH_TRANSPORT_ERROR, 0);
    vf_circuit_ticket lost, next;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 100, &lost, NULL));
    cr_assert_not(vf_circuit_admit(r, T, P, NULL, 1099, &next, NULL));
    vf_circuit_decision d;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 1100, &next, &d), "lease over: a new probe may go");
    cr_assert(d.probe);
    cr_assert_neq(next.probe_gen, lost.probe_gen);
    vf_circuit_record(r, &lost, VF_HEALTH_OK, -1, 1200);
    cr_assert_eq(state_of(r, NULL, 1200), VF_CIRCUIT_HALF_OPEN, "the superseded probe does not decide");
    vf_circuit_record(r, &next, VF_HEALTH_TRANSPORT_ERROR, -1, 1300);
    cr_assert_eq(state_of(r, NULL, 1300), VF_CIRCUIT_OPEN);
    vf_circuit_registry_free(r);
}

Test(circuit, ungated_observations_count_and_settle_after_cooldown)
{
    vf_circuit_params p = streak_params(2, 1000);
    vf_circuit_registry *r = registry(&p);
    vf_circuit_ticket t;
    for (int i = 0; i < 2; i++) {
        vf_circuit_ticket_observe(&t, T, P, NULL);
        vf_circuit_record(r, &t, VF_HEALTH_TRANSPORT_ERROR, -1, 10);
    }
    cr_assert_eq(state_of(r, NULL, 10), VF_CIRCUIT_OPEN, "observed failures open the circuit too");
    vf_circuit_ticket_observe(&t, T, P, NULL);
    vf_circuit_record(r, &t, VF_HEALTH_OK, -1, 1009);
    cr_assert_eq(state_of(r, NULL, 1009), VF_CIRCUIT_OPEN, "before the cooldown an observation says nothing");
    vf_circuit_ticket_observe(&t, T, P, NULL);
    vf_circuit_record(r, &t, VF_HEALTH_OK, -1, 1010);
    cr_assert_eq(state_of(r, NULL, 1010), VF_CIRCUIT_CLOSED, "after it, a success closes");
    vf_circuit_registry_free(r);
}

Test(circuit, unusable_content_opens_only_that_hosts_circuit)
{
    vf_circuit_params p = streak_params(3, 10000);
    vf_circuit_registry *r = registry(&p);
    for (int i = 0; i < 3; i++)
        attempt(r, "walled.example", VF_HEALTH_UNUSABLE_CONTENT, 100);
    cr_assert_eq(state_of(r, "walled.example", 100), VF_CIRCUIT_OPEN);
    cr_assert_eq(state_of(r, NULL, 100), VF_CIRCUIT_CLOSED, "provider-wide circuit untouched");

    vf_circuit_ticket t;
    vf_circuit_decision d;
    cr_assert_not(vf_circuit_admit(r, T, P, "WALLED.Example.", 200, &t, &d), "host match ignores case and the trailing dot");
    cr_assert(d.domain_scoped);
    cr_assert_eq(d.state, VF_CIRCUIT_OPEN);
    cr_assert_eq(d.retry_in_ms, 9900);
    cr_assert(vf_circuit_admit(r, T, P, "open.example", 200, &t, &d), "other hosts still use it");
    vf_circuit_release(r, &t);
    cr_assert(vf_circuit_admit(r, T, P, NULL, 200, &t, &d), "no host: only the provider-wide circuit");
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 200, &s);
    cr_assert_eq(s.tracked_hosts, 1);
    cr_assert_eq(s.consecutive_failures, 0, "unusable content is a working answer provider-wide");
    vf_circuit_registry_free(r);
}

Test(circuit, provider_failures_never_create_host_circuits)
{
    vf_circuit_params p = streak_params(3, 10000);
    vf_circuit_registry *r = registry(&p);
    attempt(r, "a.example", VF_HEALTH_TRANSPORT_ERROR, 1);
    attempt(r, "a.example", VF_HEALTH_HTTP_ERROR, 2);
    attempt(r, "b.example", VF_HEALTH_MALFORMED_RESPONSE, 3);
    cr_assert_eq(state_of(r, NULL, 3), VF_CIRCUIT_OPEN, "they count provider-wide across hosts");
    vf_circuit_snapshot s;
    cr_assert_not(vf_circuit_snapshot_get(r, T, P, "a.example", 3, &s));
    vf_circuit_ticket t;
    vf_circuit_decision d;
    cr_assert_not(vf_circuit_admit(r, T, P, "c.example", 4, &t, &d), "open everywhere");
    cr_assert_not(d.domain_scoped);
    vf_circuit_registry_free(r);
}

Test(circuit, unusable_content_resets_the_provider_wide_streak)
{
    vf_circuit_params p = streak_params(3, 10000);
    vf_circuit_registry *r = registry(&p);
    attempt(r, "a.example", VF_HEALTH_TRANSPORT_ERROR, 1);
    attempt(r, "a.example", VF_HEALTH_TRANSPORT_ERROR, 2);
    attempt(r, "a.example", VF_HEALTH_UNUSABLE_CONTENT, 3);
    attempt(r, "a.example", VF_HEALTH_TRANSPORT_ERROR, 4);
    attempt(r, "a.example", VF_HEALTH_TRANSPORT_ERROR, 5);
    cr_assert_eq(state_of(r, NULL, 5), VF_CIRCUIT_CLOSED);
    vf_circuit_registry_free(r);
}

Test(circuit, host_probe_is_settled_only_by_a_content_verdict)
{
    vf_circuit_params p = streak_params(1, 1000);
    vf_circuit_registry *r = registry(&p);
    attempt(r, "h.example", VF_HEALTH_UNUSABLE_CONTENT, 0);
    cr_assert_eq(state_of(r, "h.example", 0), VF_CIRCUIT_OPEN);
    vf_circuit_ticket probe, t;
    vf_circuit_decision d;
    cr_assert(vf_circuit_admit(r, T, P, "h.example", 1000, &probe, &d));
    cr_assert(d.probe);
    cr_assert(d.domain_scoped);
    cr_assert_eq(probe.probe_gen, 0, "the provider-wide circuit is closed");
    cr_assert_neq(probe.domain_probe_gen, 0);
    cr_assert_not(vf_circuit_admit(r, T, P, "h.example", 1001, &t, &d));
    cr_assert(d.domain_scoped);

    /* A transport error says nothing about the host's content: slot freed, still half-open. */
    vf_circuit_record(r, &probe, VF_HEALTH_TRANSPORT_ERROR, -1, 1002);
    cr_assert_eq(state_of(r, "h.example", 1002), VF_CIRCUIT_HALF_OPEN);
    cr_assert_eq(state_of(r, NULL, 1002), VF_CIRCUIT_OPEN, "but it counts provider-wide (threshold 1)");

    /* After the provider-wide cooldown both probes are taken together. */
    cr_assert(vf_circuit_admit(r, T, P, "h.example", 2002, &probe, &d));
    cr_assert_neq(probe.probe_gen, 0);
    cr_assert_neq(probe.domain_probe_gen, 0);
    vf_circuit_record(r, &probe, VF_HEALTH_OK, -1, 2003);
    cr_assert_eq(state_of(r, "h.example", 2003), VF_CIRCUIT_CLOSED);
    cr_assert_eq(state_of(r, NULL, 2003), VF_CIRCUIT_CLOSED);
    vf_circuit_registry_free(r);
}

Test(circuit, refusal_by_one_circuit_takes_no_probe_from_the_other)
{
    vf_circuit_params p = streak_params(1, 1000);
    vf_circuit_registry *r = registry(&p);
    attempt(r, "h.example", VF_HEALTH_UNUSABLE_CONTENT, 0);     /* host open until 1000 */
    attempt(r, "x.example", VF_HEALTH_TRANSPORT_ERROR, 500);   /* provider open until 1500 */
    vf_circuit_ticket t;
    vf_circuit_decision d;
    cr_assert_not(vf_circuit_admit(r, T, P, "h.example", 1000, &t, &d), "provider-wide still cooling");
    cr_assert_not(d.domain_scoped);
    cr_assert_eq(d.retry_in_ms, 500);
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, "h.example", 1000, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_OPEN, "host circuit was not moved to half-open");
    cr_assert_not(s.probe_in_flight);
    vf_circuit_registry_free(r);
}

Test(circuit, full_host_table_evicts_closed_circuits_first)
{
    vf_circuit_params p = streak_params(2, 10000);
    p.max_domains = 2;
    vf_circuit_registry *r = registry(&p);
    attempt(r, "open.example", VF_HEALTH_UNUSABLE_CONTENT, 1);
    attempt(r, "open.example", VF_HEALTH_UNUSABLE_CONTENT, 2);
    attempt(r, "closed.example", VF_HEALTH_UNUSABLE_CONTENT, 3);
    for (int i = 0; i < 20; i++) {
        char host[32];
        snprintf(host, sizeof host, "flood%d.example", i);
        attempt(r, host, VF_HEALTH_UNUSABLE_CONTENT, 10 + (uint64_t)i);
    }
    vf_circuit_snapshot s;
    cr_assert(vf_circuit_snapshot_get(r, T, P, "open.example", 50, &s), "the open circuit survives a flood");
    cr_assert_eq(s.state, VF_CIRCUIT_OPEN);
    cr_assert_not(vf_circuit_snapshot_get(r, T, P, "closed.example", 50, &s));
    cr_assert(vf_circuit_snapshot_get(r, T, P, "flood19.example", 50, &s));
    vf_circuit_snapshot_get(r, T, P, NULL, 50, &s);
    cr_assert_eq(s.tracked_hosts, 2);
    vf_circuit_registry_free(r);
}

Test(circuit, successes_do_not_create_host_entries)
{
    vf_circuit_registry *r = registry(NULL);
    for (int i = 0; i < 50; i++) {
        char host[32];
        snprintf(host, sizeof host, "h%d.example", i);
        attempt(r, host, VF_HEALTH_OK, (uint64_t)i);
    }
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 100, &s);
    cr_assert_eq(s.tracked_hosts, 0);
    vf_circuit_registry_free(r);
}

Test(circuit, overlong_host_gets_no_host_scope)
{
    vf_circuit_params p = streak_params(1, 10000);
    vf_circuit_registry *r = registry(&p);
    char host[300];
    memset(host, 'a', sizeof host - 1);
    host[sizeof host - 1] = '\0';
    attempt(r, host, VF_HEALTH_UNUSABLE_CONTENT, 1);
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 1, &s);
    cr_assert_eq(s.tracked_hosts, 0);
    cr_assert_eq(s.state, VF_CIRCUIT_CLOSED);
    vf_circuit_ticket t;
    cr_assert(vf_circuit_admit(r, T, P, host, 2, &t, NULL));
    vf_circuit_registry_free(r);
}

Test(circuit, ewma_latency)
{
    vf_circuit_params p;
    vf_circuit_params_default(&p);
    p.ewma_alpha = 0.5;
    vf_circuit_registry *r = registry(&p);
    vf_circuit_snapshot s;
    const struct { int64_t sample; double expect; } steps[] = { { 100, 100 }, { 200, 150 }, { -1, 150 }, { 50, 100 } };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        vf_circuit_ticket t;
        vf_circuit_admit(r, T, P, NULL, i, &t, NULL);
        vf_circuit_record(r, &t, i == 3 ? VF_HEALTH_TRANSPORT_ERROR : VF_HEALTH_OK, steps[i].sample, i);
        vf_circuit_snapshot_get(r, T, P, NULL, i, &s);
        cr_assert(s.has_latency);
        cr_assert_float_eq(s.ewma_latency_ms, steps[i].expect, 1e-9, "step %zu: %f", i, s.ewma_latency_ms);
    }
    vf_circuit_registry_free(r);
}

Test(circuit, ticket_is_consumed_once)
{
    vf_circuit_params p = streak_params(2, 1000);
    vf_circuit_registry *r = registry(&p);
    vf_circuit_ticket t;
    cr_assert(vf_circuit_admit(r, T, P, NULL, 0, &t, NULL));
    vf_circuit_record(r, &t, VF_HEALTH_TRANSPORT_ERROR, -1, 1);
    vf_circuit_record(r, &t, VF_HEALTH_TRANSPORT_ERROR, -1, 2);
    cr_assert_eq(state_of(r, NULL, 2), VF_CIRCUIT_CLOSED, "a replayed ticket must not count twice");
    vf_circuit_registry_free(r);
}

Test(circuit, tenants_are_isolated_and_configured_separately)
{
    vf_circuit_registry *r = registry(NULL);   /* defaults: threshold 5 */
    vf_circuit_params strict = streak_params(1, 1000);
    cr_assert_eq(vf_circuit_configure_tenant(r, "strict", &strict), 0);
    vf_circuit_ticket t;
    cr_assert(vf_circuit_admit(r, "strict", P, NULL, 0, &t, NULL));
    vf_circuit_record(r, &t, VF_HEALTH_TRANSPORT_ERROR, -1, 0);
    cr_assert(vf_circuit_admit(r, T, P, NULL, 0, &t, NULL));
    vf_circuit_record(r, &t, VF_HEALTH_TRANSPORT_ERROR, -1, 0);
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, "strict", P, NULL, 0, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_OPEN);
    vf_circuit_snapshot_get(r, T, P, NULL, 0, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_CLOSED, "same provider name, other tenant: own circuit");
    vf_circuit_params bad = strict;
    bad.window = 0;
    cr_assert_eq(vf_circuit_configure_tenant(r, "strict", &bad), -1);
    vf_circuit_registry_free(r);
}

Test(circuit, params_validation)
{
    vf_circuit_params p;
    char err[128];
    vf_circuit_params_default(&p);
    cr_assert_eq(vf_circuit_params_validate(&p, err, sizeof err), 0);
#define EXPECT_BAD(stmt, field)                                                        \
    do {                                                                                \
        vf_circuit_params_default(&p);                                                  \
        stmt;                                                                           \
        cr_assert_eq(vf_circuit_params_validate(&p, err, sizeof err), -1, "%s", #stmt); \
        cr_assert(strncmp(err, field, strlen(field)) == 0, "%s: got \"%s\"", #stmt, err); \
        cr_assert_null(vf_circuit_registry_new(&p));                                    \
    } while (0)
    EXPECT_BAD(p.window = 0, "window");
    EXPECT_BAD(p.window = 65, "window");
    EXPECT_BAD(p.min_samples = 21, "min_samples");
    EXPECT_BAD(p.min_samples = 0, "min_samples");
    EXPECT_BAD(p.failure_rate = 1.5, "failure_rate");
    EXPECT_BAD((p.failure_threshold = 0, p.failure_rate = 0), "failure_threshold");
    EXPECT_BAD(p.cooldown_ms = 0, "cooldown_ms");
    EXPECT_BAD(p.probe_lease_ms = 0, "probe_lease_ms");
    EXPECT_BAD(p.ewma_alpha = 0, "ewma_alpha");
    EXPECT_BAD(p.max_domains = 0, "max_domains");
    EXPECT_BAD(p.max_domains = 4097, "max_domains");
#undef EXPECT_BAD
}

Test(circuit, state_names_and_gauge_values)
{
    cr_assert_eq(VF_CIRCUIT_CLOSED, 0);
    cr_assert_eq(VF_CIRCUIT_OPEN, 1);
    cr_assert_eq(VF_CIRCUIT_HALF_OPEN, 2);
    cr_assert_str_eq(vf_circuit_state_name(VF_CIRCUIT_HALF_OPEN), "half_open");
    cr_assert_str_eq(vf_circuit_state_name(VF_CIRCUIT_OPEN), "open");
}

Test(circuit, null_and_bad_names_fail_open)
{
    vf_circuit_ticket t;
    cr_assert(vf_circuit_admit(NULL, T, P, NULL, 0, &t, NULL), "no registry: admit, untracked");
    vf_circuit_record(NULL, &t, VF_HEALTH_OK, 1, 0);
    vf_circuit_registry *r = opened_at(0, 10);
    cr_assert(vf_circuit_admit(r, T, P, NULL, 10, NULL, NULL), "no ticket: admitted untracked");
    vf_circuit_snapshot s;
    vf_circuit_snapshot_get(r, T, P, NULL, 10, &s);
    cr_assert_eq(s.state, VF_CIRCUIT_OPEN, "and no probe was taken");
    cr_assert(vf_circuit_admit(r, "", P, NULL, 0, &t, NULL));
    vf_circuit_record(r, &t, VF_HEALTH_TRANSPORT_ERROR, 1, 0);
    cr_assert_not(vf_circuit_snapshot_get(r, "", P, NULL, 0, &s));
    cr_assert_eq(s.state, VF_CIRCUIT_CLOSED);
    vf_circuit_registry_free(r);
}
