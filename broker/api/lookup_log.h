/* One canonical structured log line per lookup, built from the (already
 * redacted) receipt, so a log never holds more than the agent was shown. */
#ifndef VERIFETCH_LOOKUP_LOG_H
#define VERIFETCH_LOOKUP_LOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Writes {"ts","event":"lookup","tenant","url","status","attempts","provider_used",
 * "failure_reason","outcomes":[...],"duration_ms"} as one JSON line. */
void vf_lookup_log(FILE *to, const char *tenant, const json_t *tool_result, int64_t duration_ms);

/* A cache hit answered without running the lookup: {"ts","event":"lookup",
 * "tenant","url","status":"success","cache":"hit","duration_ms"}; url is
 * the caller's, already redacted like a receipt's. */
void vf_lookup_log_hit(FILE *to, const char *tenant, const char *redacted_url, int64_t duration_ms);

/* Same shape for refusals before a lookup ran ("bad_request", "throttled", "forbidden").
 * Rate-limited per event (broker/log_limit.h): event must be a literal. */
void vf_request_log(FILE *to, const char *tenant, const char *event, const char *detail);

/* Writes {"event":"log_suppressed","kind","suppressed","detail":"N similar
 * messages suppressed"} for each kind whose held-back lines are due (every
 * kind with some when force). Called by the server's housekeeping tick. */
void vf_log_summaries(FILE *to, bool force);

#endif
