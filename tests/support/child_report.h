/* A child process that reports one fixed-size record back: for tests that
 * must run code where it may break the process (a seccomp filter, fds 3+
 * rearranged) and then look at what happened from outside. */
#ifndef VERIFETCH_TEST_CHILD_REPORT_H
#define VERIFETCH_TEST_CHILD_REPORT_H

#include <stddef.h>
#include <sys/types.h>

/* Forks; the child runs fn(ctx, report_fd), which writes its record to
 * report_fd and ends with _exit. The parent reads up to size bytes into out
 * and reaps the child. Returns the bytes read (-1 when fork or pipe failed)
 * and the child's wait status in *status. */
ssize_t child_report(void (*fn)(void *ctx, int report_fd), void *ctx, void *out, size_t size, int *status);

#endif
