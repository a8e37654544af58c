#include "redis_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "tests/e2e/harness.h"

#define START_MS 10000

static redisContext *connect_to(const rp_redis *r)
{
    struct timeval tv = { .tv_sec = 0, .tv_usec = 300000 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
    if (c && !c->err && redisSetTimeout(c, tv) == REDIS_OK)
        return c;
    if (c)
        redisFree(c);
    return NULL;
}

bool rp_ping(const rp_redis *r)
{
    redisContext *c = connect_to(r);
    if (!c)
        return false;
    redisReply *rep = redisCommand(c, "PING");
    bool ok = rep && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "PONG") == 0;
    if (rep)
        freeReplyObject(rep);
    redisFree(c);
    return ok;
}

void rp_start(rp_redis *r, int port)
{
    r->port = port ? port : hx_closed_port();
    snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%d", r->port);
    char port_s[16], dir[PATH_MAX], log[PATH_MAX];
    snprintf(port_s, sizeof port_s, "%d", r->port);
    snprintf(dir, sizeof dir, "%s", hx_tmpdir());
    snprintf(log, sizeof log, "%s/redis-%d.log", hx_tmpdir(), r->port);
    pid_t parent = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
            _exit(127);
        closefrom(3);
        execlp("redis-server", "redis-server", "--bind", "127.0.0.1", "--port", port_s, "--save", "",
               "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--protected-mode", "yes",
               (char *)NULL);
        _exit(127);
    }
    r->pid = pid;
    for (int waited = 0; waited < START_MS; waited += 20) {
        if (rp_ping(r))
            return;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            r->pid = 0;
            char *text = hx_read_file(log, NULL);
            cr_assert_fail("redis-server exited at start (is the redis-server package installed?): %s",
                           text ? text : "");
        }
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
    }
    cr_assert_fail("redis-server did not answer PING within %d ms", START_MS);
}

void rp_kill(rp_redis *r)
{
    if (r->pid <= 0)
        return;
    kill(r->pid, SIGKILL);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
}

char *rp_dump(const rp_redis *r)
{
    redisContext *c = connect_to(r);
    cr_assert_not_null(c, "cannot connect to redis on port %d", r->port);
    redisReply *keys = redisCommand(c, "KEYS *");
    cr_assert(keys && keys->type == REDIS_REPLY_ARRAY, "KEYS failed");
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    out[0] = '\0';
    for (size_t i = 0; i < keys->elements; i++) {
        const char *k = keys->element[i]->str;
        redisReply *v = redisCommand(c, "GET %s", k);
        const char *val = v && v->type == REDIS_REPLY_STRING ? v->str : "<not a string>";
        size_t need = strlen(k) + strlen(val) + 4;
        while (len + need >= cap) {
            cap *= 2;
            out = realloc(out, cap);
            cr_assert_not_null(out);
        }
        len += (size_t)snprintf(out + len, cap - len, "%s %s\n", k, val);
        if (v)
            freeReplyObject(v);
    }
    freeReplyObject(keys);
    redisFree(c);
    return out;
}

char *rp_keys(const rp_redis *r)
{
    redisContext *c = connect_to(r);
    cr_assert_not_null(c, "cannot connect to redis on port %d", r->port);
    redisReply *keys = redisCommand(c, "KEYS *");
    cr_assert(keys && keys->type == REDIS_REPLY_ARRAY, "KEYS failed");
    size_t len = 1;
    for (size_t i = 0; i < keys->elements; i++)
        len += keys->element[i]->len + 1;
    char *out = calloc(1, len);
    cr_assert_not_null(out);
    for (size_t i = 0; i < keys->elements; i++) {
        strcat(out, keys->element[i]->str);
        strcat(out, "\n");
    }
    freeReplyObject(keys);
    redisFree(c);
    return out;
}

long long rp_command_int(const rp_redis *r, const char *fmt, ...)
{
    redisContext *c = connect_to(r);
    if (!c)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = redisvCommand(c, fmt, ap);
    va_end(ap);
    long long v = rep && rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
    if (rep)
        freeReplyObject(rep);
    redisFree(c);
    return v;
}
