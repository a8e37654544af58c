/* Harness-private helpers shared by the harness_*.c files (not for tests). */
#ifndef VERIFETCH_E2E_HARNESS_INTERNAL_H
#define VERIFETCH_E2E_HARNESS_INTERNAL_H

#include "harness.h"

/* fork + execvp argv with the given stdio; the child gets deathsig when the test
 * process dies and inherits no other descriptor. The pid is tracked for teardown. */
pid_t hx_spawn(char *const argv[], int in_fd, int out_fd, int err_fd, int deathsig);
void hx_track(pid_t pid);
bool hx_wait_timeout(pid_t pid, unsigned timeout_ms, int *status);
int hx_kill_reap(pid_t pid, int first_signal, unsigned grace_ms);
/* Kill and reap every tracked process and every orphan re-parented to us. */
void hx_reap_all(void);
void hx_sleep_ms(unsigned ms);
/* snprintf that aborts the test instead of silently truncating (paths, URLs). */
void hx_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
