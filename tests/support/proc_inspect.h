/* Looking at live processes from outside through /proc, for the e2e, hostile,
 * provider, soak and benchmark tests: a process's files, parent, children and
 * descendants, descriptor count and memory figures. No Criterion in here, so
 * helper threads and the benchmark can use it too. */
#ifndef VERIFETCH_TESTS_PROC_INSPECT_H
#define VERIFETCH_TESTS_PROC_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* /proc/<pid>/<what> (malloc'd, NUL-terminated; *len without the NUL) or NULL. */
char *pi_read(pid_t pid, const char *what, size_t *len);

/* Parent pid from /proc/<pid>/stat, or -1. */
pid_t pi_parent(pid_t pid);

/* Direct children of pid, up to max of them into out; returns how many. */
size_t pi_children(pid_t pid, pid_t *out, size_t max);

/* Every live process below root (children, grandchildren, ...), whatever sits
 * between. Returns how many there are; the first max go into out (out may be
 * NULL when max is 0). */
size_t pi_descendants(pid_t root, pid_t *out, size_t max);

/* Open descriptors of pid (entries of /proc/<pid>/fd), or -1. */
long pi_fd_count(pid_t pid);

/* A "Name:" line of /proc/<pid>/status in KiB ("VmRSS", "VmHWM"), or -1. */
long pi_status_kib(pid_t pid, const char *field);
/* The number on a "Name:" line of /proc/<pid>/status, or -1; pid may be a
 * thread id ("voluntary_ctxt_switches": how often it went to sleep). */
long pi_status_number(pid_t pid, const char *field);

/* argv[0] starts with "verifetch-worker". */
bool pi_is_worker(pid_t pid);
/* argv[1] is "--zygote": the broker's zygote, which lives as long as the broker. */
bool pi_is_zygote(pid_t pid);

#endif
