/* The single scan that drives text redaction (private): one pass over the
 * text that stops only where the trigger set (redact_trigset.h) says a secret
 * form or a pattern rule may begin. */
#ifndef VERIFETCH_REDACT_SCAN_H
#define VERIFETCH_REDACT_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "broker/judge/redact_buf.h"
#include "broker/judge/redact_trigset.h"

struct vf_secret_set;
struct vf_pattern_set;

/* Appends in[0..len) to out with every secret form and pattern match
 * replaced by VF_REDACTED. any: union of both trigger sets; secret_triggers:
 * the secrets' own. deadline_ms: CLOCK_MONOTONIC milliseconds after which
 * the scan gives up and sets *over_budget (0 = no deadline). false if
 * scratch memory cannot be allocated or the deadline passed. */
bool vf_redact_scan(const struct vf_secret_set *secrets, const struct vf_pattern_set *patterns,
                    const vf_trigset *any, const vf_trigset *secret_triggers,
                    const char *in, size_t len, int64_t deadline_ms, bool *over_budget,
                    vf_rbuf *out);

#endif
