/* A test process's own memory figures from /proc/self (Linux). */
#ifndef VERIFETCH_TESTS_PROC_PEAK_H
#define VERIFETCH_TESTS_PROC_PEAK_H

/* A "Key:  N kB" line of /proc/self/status, in KiB; -1 if absent. */
long proc_status_kib(const char *key);
/* Peak RSS from here on: writing 5 to clear_refs resets VmHWM. */
void proc_reset_peak(void);

#endif
