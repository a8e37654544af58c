#include "broker/log_limit.h"

#include <pthread.h>
#include <string.h>

#include "ipc/ipc_frame.h"

typedef struct {
    const char *kind;
    int64_t window_start;   /* ms */
    unsigned written;       /* lines let through in this window */
    unsigned suppressed;    /* lines held back since the last summary */
} kind_state;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kind_state kinds[VF_LOG_KINDS];
static size_t n_kinds;

/* Under lock. The last slot is shared by every kind past the table's size. */
static kind_state *find(const char *kind)
{
    for (size_t i = 0; i < n_kinds; i++)
        if (kinds[i].kind == kind || strcmp(kinds[i].kind, kind) == 0)
            return &kinds[i];
    if (n_kinds == VF_LOG_KINDS)
        return &kinds[VF_LOG_KINDS - 1];
    kinds[n_kinds].kind = kind;
    return &kinds[n_kinds++];
}

bool vf_log_limit_take(const char *kind)
{
    int64_t now = vf_now_ms();
    pthread_mutex_lock(&lock);
    kind_state *k = find(kind);
    if (now - k->window_start >= VF_LOG_WINDOW_MS) {
        k->window_start = now;
        k->written = 0;
    }
    bool ok = k->written < VF_LOG_BURST;
    if (ok)
        k->written++;
    else
        k->suppressed++;
    pthread_mutex_unlock(&lock);
    return ok;
}

size_t vf_log_limit_due(vf_log_summary *out, size_t max, bool force)
{
    int64_t now = vf_now_ms();
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_kinds && n < max; i++) {
        kind_state *k = &kinds[i];
        if (!k->suppressed || (!force && now - k->window_start < VF_LOG_WINDOW_MS))
            continue;
        out[n++] = (vf_log_summary){ .kind = k->kind, .suppressed = k->suppressed };
        k->suppressed = 0;
    }
    pthread_mutex_unlock(&lock);
    return n;
}
