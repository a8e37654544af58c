/* OpenSSL's random generators in forked workers (worker/fetch/fork_random.c).
 * The case that matters is the one where OpenSSL's own fork check cannot
 * help: a parent that is pid 1 of a pid namespace forks children that are
 * pid 1 of theirs, as a zygote started as a namespace's first process would.
 * Each case runs in a helper process: a user namespace (for the clone
 * flags without root), a "zygote" cloned as pid 1 of a new pid namespace,
 * and its "workers" cloned the same way, each reporting what it drew. */
#include <criterion/criterion.h>
#include <errno.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker/fetch/fork_random.h"

#define DRAW_BYTES 16
#define HEX_LEN (4 * DRAW_BYTES) /* public, then private */
#define N_WORKERS 2

typedef enum { NOT_ARMED, ARMED, ARMED_THEN_SETTLED } zygote_mode;

/* One child in a new pid namespace, so it is pid 1 there; like fork(). */
static pid_t clone_pid1(void)
{
    return (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
}

static unsigned reseed_requests(EVP_RAND_CTX *ctx)
{
    unsigned v = 0;
    OSSL_PARAM p[] = { OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, &v), OSSL_PARAM_construct_end() };
    return EVP_RAND_CTX_get_params(ctx, p) == 1 ? v : 0;
}

/* A worker: its pid-1 status, what it drew in hex, and the public DRBG's
 * reseed interval afterwards, as one line on fd. */
static void worker(int fd, zygote_mode mode)
{
    vf_fork_random_in_worker();
    if (mode == ARMED_THEN_SETTLED)
        vf_fork_random_settle();
    unsigned char r[2 * DRAW_BYTES];
    char line[HEX_LEN + 64];
    if (RAND_bytes(r, DRAW_BYTES) != 1 || RAND_priv_bytes(r + DRAW_BYTES, DRAW_BYTES) != 1)
        _exit(3);
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(line + 2 * i, 3, "%02x", r[i]);
    int n = snprintf(line + HEX_LEN, sizeof line - HEX_LEN, " pid=%d interval=%u\n", (int)getpid(),
                     reseed_requests(RAND_get0_public(NULL)));
    _exit(write(fd, line, (size_t)(HEX_LEN + n)) == HEX_LEN + n ? 0 : 4);
}

/* The zygote: draws (so its DRBGs hold state seeded as pid 1), arms or not,
 * then forks its workers one after the other. */
static void zygote(int fd, zygote_mode mode)
{
    unsigned char warm[DRAW_BYTES];
    if (getpid() != 1 || RAND_bytes(warm, sizeof warm) != 1 || RAND_priv_bytes(warm, sizeof warm) != 1)
        _exit(5);
    if (mode != NOT_ARMED && !vf_fork_random_arm())
        _exit(6);
    for (int i = 0; i < N_WORKERS; i++) {
        pid_t w = clone_pid1();
        if (w == 0)
            worker(fd, mode);
        int st;
        if (w < 0 || waitpid(w, &st, 0) != w || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            _exit(7);
    }
    _exit(0);
}

typedef struct {
    char hex[N_WORKERS][HEX_LEN + 1];
    int pid[N_WORKERS];
    unsigned interval[N_WORKERS];
} draws;

static void run_case(zygote_mode mode, draws *out)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t helper = fork();
    cr_assert_geq(helper, 0);
    if (helper == 0) {
        close(p[0]);
        if (unshare(CLONE_NEWUSER) != 0)
            _exit(8);
        pid_t z = clone_pid1();
        if (z == 0)
            zygote(p[1], mode);
        int st;
        _exit(z > 0 && waitpid(z, &st, 0) == z && WIFEXITED(st) ? WEXITSTATUS(st) : 9);
    }
    close(p[1]);
    char buf[4096];
    size_t got = 0;
    for (ssize_t n; got < sizeof buf - 1 && (n = read(p[0], buf + got, sizeof buf - 1 - got)) > 0;)
        got += (size_t)n;
    buf[got] = 0;
    close(p[0]);
    int st;
    cr_assert_eq(waitpid(helper, &st, 0), helper);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "helper status 0x%x (%s)", st, strerror(errno));
    const char *line = buf;
    for (int i = 0; i < N_WORKERS; i++) {
        cr_assert_eq(sscanf(line, "%64[0-9a-f] pid=%d interval=%u", out->hex[i], &out->pid[i], &out->interval[i]), 3,
                     "worker %d said: %s", i, line);
        cr_assert_eq(out->pid[i], 1, "a worker is pid 1 of its namespace");
        line = strchr(line, '\n');
        cr_assert_not_null(line);
        line++;
    }
}

static bool same_half(const draws *d, int half)
{
    return memcmp(d->hex[0] + half * 2 * DRAW_BYTES, d->hex[1] + half * 2 * DRAW_BYTES, 2 * DRAW_BYTES) == 0;
}

/* What the arming is for: without it, OpenSSL 3.0 hands two such workers
 * the very same bytes from both generators. (Should a later OpenSSL notice
 * the fork by itself, this fails, and the case below no longer proves
 * anything on its own.) */
Test(fork_random, unarmed_workers_with_matching_pids_draw_the_same_bytes)
{
    draws d;
    run_case(NOT_ARMED, &d);
    cr_assert(same_half(&d, 0) && same_half(&d, 1), "OpenSSL reseeded by itself: %s / %s", d.hex[0], d.hex[1]);
}

/* Runs the case and asserts the two workers' public bytes differ, and their
 * private ones. */
static void run_case_apart(zygote_mode mode, draws *d)
{
    run_case(mode, d);
    cr_assert_not(same_half(d, 0), "public bytes repeated: %.32s", d->hex[0]);
    cr_assert_not(same_half(d, 1), "private bytes repeated: %s", d->hex[0] + 32);
}

Test(fork_random, armed_workers_draw_their_own_bytes)
{
    draws d;
    run_case_apart(ARMED, &d);
    cr_assert_eq(d.interval[0], 1, "armed: every draw reseeds");
}

Test(fork_random, settled_workers_draw_their_own_bytes_at_the_usual_interval)
{
    draws d;
    run_case_apart(ARMED_THEN_SETTLED, &d);
    /* Back to what the zygote had before arming, which OpenSSL's default is. */
    cr_assert_gt(d.interval[0], 1, "settled, yet every draw still reseeds");
    EVP_RAND_CTX *pub = RAND_get0_public(NULL);
    cr_assert_not_null(pub);
    cr_assert_eq(d.interval[0], reseed_requests(pub));
}

/* Settling is a worker's business: in the zygote it would disarm every
 * worker forked after it. */
Test(fork_random, settling_outside_a_worker_keeps_the_arming)
{
    cr_assert(vf_fork_random_arm());
    vf_fork_random_settle();
    cr_assert_eq(reseed_requests(RAND_get0_public(NULL)), 1);
    cr_assert_eq(reseed_requests(RAND_get0_private(NULL)), 1);
    cr_assert_eq(reseed_requests(RAND_get0_primary(NULL)), 1);
}
