/* A throwaway redis-server for fleet tests: 127.0.0.1 on a free port, no
 * persistence (--save '' --appendonly no), its files in the test's tmp dir,
 * started and stopped by the test (and killed with it: PDEATHSIG). */
#ifndef VERIFETCH_TESTS_FLEET_REDIS_PROC_H
#define VERIFETCH_TESTS_FLEET_REDIS_PROC_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;
    int port;
    char url[64];          /* "redis://127.0.0.1:<port>" */
} rp_redis;

/* Starts on a fresh port (port 0) or the given one; waits until PING answers. */
void rp_start(rp_redis *r, int port);
/* SIGKILL and reap (a crash, not a shutdown). */
void rp_kill(rp_redis *r);
/* true when PING answers within a short timeout. */
bool rp_ping(const rp_redis *r);
/* Every key and its string value (or "<type>") joined with newlines, malloc'd. */
char *rp_dump(const rp_redis *r);
/* Every key name, one a line, malloc'd. */
char *rp_keys(const rp_redis *r);
/* Runs a command given as a format string (hiredis redisCommand); integer reply or -1. */
long long rp_command_int(const rp_redis *r, const char *fmt, ...);

#endif
