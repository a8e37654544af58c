/* Log rate limiting per kind of message, so an attack (bad requests, refused
 * connections, spawn or store failures) cannot flood the log: each kind may
 * write VF_LOG_BURST lines per VF_LOG_WINDOW_MS window; the rest are only
 * counted, and once the window is over one summary line reports how many
 * were held back. Pure bookkeeping: callers write their own lines, and
 * whoever calls vf_log_limit_due() writes the summaries. Any thread. */
#ifndef VERIFETCH_LOG_LIMIT_H
#define VERIFETCH_LOG_LIMIT_H

#include <stdbool.h>
#include <stddef.h>

#define VF_LOG_BURST 10u
#define VF_LOG_WINDOW_MS 5000u
#define VF_LOG_KINDS 32u   /* distinct kinds tracked; later ones share one slot */

/* True: write this line now. False: counted for a later summary. kind must
 * be a string that lives for the process (a literal). */
bool vf_log_limit_take(const char *kind);

/* One summary whose window is over: how many lines of kind were held back. */
typedef struct {
    const char *kind;
    unsigned suppressed;
} vf_log_summary;

/* Fills out with summaries that are due (resetting them) and returns how
 * many; force = report even inside a window (at exit). */
size_t vf_log_limit_due(vf_log_summary *out, size_t max, bool force);

#endif
