/* Where a worker's (and the zygote's) fd 2 goes (issue 13 item 7): never
 * the broker's own stderr, which under systemd is a journal socket a
 * worker could write forged lines into. Every spawned helper shares one
 * pipe; a broker thread reads it and writes each line to the broker's
 * stderr escaped to printable ASCII, cut, and prefixed, so nothing a
 * worker prints can pass for a broker line (sanitizer reports stay
 * readable). */
#ifndef VERIFETCH_WORKER_STDERR_H
#define VERIFETCH_WORKER_STDERR_H

/* The pipe's write end (CLOEXEC), started on first use; -1 when no pipe or
 * thread could be made (then callers give the child /dev/null). */
int vf_worker_stderr_fd(void);

#endif
