/* Quotas: requests per minute (token bucket, injected time) with Retry-After,
 * concurrency slots, their interplay, reload, and bad input. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "broker/api/quota.h"

static vf_quota *quota_with(const char *tenant, unsigned conc, unsigned rpm, unsigned burst)
{
    vf_quota *q = vf_quota_new();
    cr_assert_not_null(q);
    vf_quota_limits l = { .max_concurrent = conc, .requests_per_minute = rpm, .burst = burst };
    cr_assert_eq(vf_quota_configure(q, tenant, &l, 0), 0);
    return q;
}

/* Acquire and release at once: spends a token, keeps no slot. */
static vf_quota_verdict hit(vf_quota *q, const char *tenant, uint64_t now, unsigned *retry)
{
    vf_quota_verdict v = vf_quota_acquire(q, tenant, now, retry);
    if (v == VF_QUOTA_OK)
        vf_quota_release(q, tenant);
    return v;
}

Test(quota, rpm_exceeded_is_refused_with_retry_after)
{
    vf_quota *q = quota_with("a", 0, 60, 0);   /* burst defaults to 60 */
    unsigned retry = 99;
    for (int i = 0; i < 60; i++) {
        cr_assert_eq(hit(q, "a", 0, &retry), VF_QUOTA_OK, "request %d", i);
        cr_assert_eq(retry, 0);
    }
    cr_assert_eq(hit(q, "a", 0, &retry), VF_QUOTA_RATE);
    cr_assert_eq(retry, 1, "60/min refills one token per second");
    cr_assert_eq(vf_quota_in_flight(q, "a"), 0, "a refusal takes no slot");
    vf_quota_free(q);
}

Test(quota, refill_over_injected_time)
{
    vf_quota *q = quota_with("a", 0, 2, 2);   /* one token per 30 s */
    unsigned retry;
    cr_assert_eq(hit(q, "a", 0, &retry), VF_QUOTA_OK);
    cr_assert_eq(hit(q, "a", 0, &retry), VF_QUOTA_OK);
    cr_assert_eq(hit(q, "a", 0, &retry), VF_QUOTA_RATE);
    cr_assert_eq(retry, 30);
    cr_assert_eq(hit(q, "a", 20000, &retry), VF_QUOTA_RATE);
    cr_assert_eq(retry, 10, "refill is continuous: 20 s earned 2/3 of a token");
    cr_assert_eq(hit(q, "a", 29999, &retry), VF_QUOTA_RATE);
    cr_assert_eq(retry, 1, "1 ms left still rounds up to a whole second");
    cr_assert_eq(hit(q, "a", 30000, &retry), VF_QUOTA_OK);
    cr_assert_eq(hit(q, "a", 30000, &retry), VF_QUOTA_RATE);
    vf_quota_free(q);
}

Test(quota, retry_after_rounds_up)
{
    vf_quota *q = quota_with("a", 0, 7, 1);   /* a token every 8571.4 ms */
    unsigned retry;
    cr_assert_eq(hit(q, "a", 0, &retry), VF_QUOTA_OK);
    cr_assert_eq(hit(q, "a", 0, &retry), VF_QUOTA_RATE);
    cr_assert_eq(retry, 9);
    cr_assert_eq(hit(q, "a", 8571, &retry), VF_QUOTA_RATE, "8571 ms * 7 < 60000 units");
    cr_assert_eq(hit(q, "a", 8572, &retry), VF_QUOTA_OK);
    vf_quota_free(q);
}

Test(quota, bucket_never_holds_more_than_burst)
{
    vf_quota *q = quota_with("a", 0, 60, 3);
    unsigned retry;
    uint64_t hour = 3600u * 1000u;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(hit(q, "a", hour, &retry), VF_QUOTA_OK);
    cr_assert_eq(hit(q, "a", hour, &retry), VF_QUOTA_RATE, "an idle hour still leaves only 3 tokens");
    vf_quota_free(q);
}

Test(quota, concurrency_limit)
{
    vf_quota *q = quota_with("a", 2, 0, 0);
    unsigned retry = 0;
    cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_in_flight(q, "a"), 2);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_CONCURRENCY);
    cr_assert_eq(retry, 1);
    cr_assert_eq(vf_quota_in_flight(q, "a"), 2);
    vf_quota_release(q, "a");
    cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_OK);
    vf_quota_release(q, "a");
    vf_quota_release(q, "a");
    vf_quota_release(q, "a");   /* one too many: ignored */
    cr_assert_eq(vf_quota_in_flight(q, "a"), 0);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_CONCURRENCY, "no extra slot from the bad release");
    vf_quota_free(q);
}

Test(quota, concurrency_refusal_spends_no_token)
{
    vf_quota *q = quota_with("a", 1, 2, 2);
    unsigned retry;
    cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_OK);         /* token 1 */
    for (int i = 0; i < 5; i++)
        cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_CONCURRENCY);
    vf_quota_release(q, "a");
    cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_OK, "token 2 is still there");
    vf_quota_release(q, "a");
    cr_assert_eq(vf_quota_acquire(q, "a", 0, &retry), VF_QUOTA_RATE);
    vf_quota_free(q);
}

Test(quota, tenants_are_independent)
{
    vf_quota *q = quota_with("a", 1, 1, 1);
    vf_quota_limits l = { .max_concurrent = 1, .requests_per_minute = 1 };
    cr_assert_eq(vf_quota_configure(q, "b", &l, 0), 0);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_acquire(q, "b", 0, NULL), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_in_flight(q, "a"), 1);
    cr_assert_eq(vf_quota_in_flight(q, "b"), 1);
    vf_quota_free(q);
}

Test(quota, unlimited_when_zero)
{
    vf_quota *q = quota_with("a", 0, 0, 0);
    for (int i = 0; i < 10000; i++)
        cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_in_flight(q, "a"), 10000);
    vf_quota_free(q);
}

Test(quota, unknown_tenant_is_refused)
{
    vf_quota *q = quota_with("a", 0, 0, 0);
    unsigned retry = 0;
    cr_assert_eq(vf_quota_acquire(q, "nobody", 0, &retry), VF_QUOTA_UNKNOWN_TENANT);
    cr_assert_geq(retry, 1);
    cr_assert_eq(vf_quota_acquire(q, NULL, 0, &retry), VF_QUOTA_UNKNOWN_TENANT);
    cr_assert_eq(vf_quota_acquire(NULL, "a", 0, &retry), VF_QUOTA_UNKNOWN_TENANT);
    vf_quota_release(q, "nobody");
    cr_assert_eq(vf_quota_in_flight(q, "nobody"), 0);
    vf_quota_free(q);
}

Test(quota, reload_keeps_in_flight_and_caps_tokens)
{
    vf_quota *q = quota_with("a", 5, 60, 10);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_OK);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_OK);   /* 8 tokens left, 2 in flight */
    vf_quota_limits smaller = { .max_concurrent = 2, .requests_per_minute = 60, .burst = 1 };
    cr_assert_eq(vf_quota_configure(q, "a", &smaller, 0), 0);
    cr_assert_eq(vf_quota_in_flight(q, "a"), 2);
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_CONCURRENCY, "new limit applies to old slots");
    vf_quota_release(q, "a");
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_OK, "one token kept (capped to burst 1)");
    vf_quota_release(q, "a");
    cr_assert_eq(vf_quota_acquire(q, "a", 0, NULL), VF_QUOTA_RATE);
    vf_quota_free(q);
}

Test(quota, turning_a_rate_on_starts_with_a_full_bucket)
{
    vf_quota *q = quota_with("a", 0, 0, 0);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(hit(q, "a", 1000, NULL), VF_QUOTA_OK);
    vf_quota_limits l = { .requests_per_minute = 3 };
    cr_assert_eq(vf_quota_configure(q, "a", &l, 2000), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(hit(q, "a", 2000, NULL), VF_QUOTA_OK);
    cr_assert_eq(hit(q, "a", 2000, NULL), VF_QUOTA_RATE);
    vf_quota_free(q);
}

Test(quota, a_clock_stepping_back_grants_nothing_extra)
{
    vf_quota *q = quota_with("a", 0, 60, 1);
    cr_assert_eq(hit(q, "a", 10000, NULL), VF_QUOTA_OK);
    cr_assert_eq(hit(q, "a", 5000, NULL), VF_QUOTA_RATE);
    cr_assert_eq(hit(q, "a", 5999, NULL), VF_QUOTA_RATE);
    cr_assert_eq(hit(q, "a", 6000, NULL), VF_QUOTA_OK, "refill restarts from the step back");
    vf_quota_free(q);
}

Test(quota, bad_configuration_is_refused)
{
    vf_quota *q = vf_quota_new();
    vf_quota_limits l = { .requests_per_minute = VF_QUOTA_MAX_RPM + 1 };
    cr_assert_eq(vf_quota_configure(q, "a", &l, 0), -1);
    l = (vf_quota_limits){ .burst = VF_QUOTA_MAX_RPM + 1 };
    cr_assert_eq(vf_quota_configure(q, "a", &l, 0), -1);
    l = (vf_quota_limits){ .requests_per_minute = VF_QUOTA_MAX_RPM, .burst = VF_QUOTA_MAX_RPM };
    cr_assert_eq(vf_quota_configure(q, "a", &l, 0), 0, "the maximum itself is fine");
    cr_assert_eq(hit(q, "a", UINT64_MAX / 2, NULL), VF_QUOTA_OK, "huge gaps do not overflow");
    cr_assert_eq(vf_quota_configure(q, "", &l, 0), -1);
    cr_assert_eq(vf_quota_configure(q, NULL, &l, 0), -1);
    cr_assert_eq(vf_quota_configure(q, "a", NULL, 0), -1);
    char longname[VF_QUOTA_NAME_MAX + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cr_assert_eq(vf_quota_configure(q, longname, &l, 0), -1);
    for (unsigned i = 1; i < VF_QUOTA_MAX_TENANTS; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%u", i);
        cr_assert_eq(vf_quota_configure(q, name, &l, 0), 0, "tenant %u", i);
    }
    cr_assert_eq(vf_quota_configure(q, "one-too-many", &l, 0), -1);
    cr_assert_eq(vf_quota_configure(q, "t1", &l, 0), 0, "reconfiguring at the cap still works");
    vf_quota_free(q);
}

Test(quota, verdict_names)
{
    cr_assert_str_eq(vf_quota_verdict_name(VF_QUOTA_OK), "ok");
    cr_assert_str_eq(vf_quota_verdict_name(VF_QUOTA_CONCURRENCY), "concurrency");
    cr_assert_str_eq(vf_quota_verdict_name(VF_QUOTA_RATE), "rate");
    cr_assert_str_eq(vf_quota_verdict_name(VF_QUOTA_UNKNOWN_TENANT), "unknown_tenant");
}
