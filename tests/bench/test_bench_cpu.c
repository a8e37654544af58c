/* The benchmark's CPU reading of the broker's process tree never drops when
 * a zygote is retired (bench_cpu.c). A stand-in broker (a child of this test)
 * starts a stand-in zygote that spends 200 ms of CPU, then a second one; the
 * first exits and stays a zombie (no command line) until the broker reaps it.
 * Read while it is a zombie, a reading that picks one zygote by its command
 * line loses the first one's 200 ms, and the next cell gets them back.
 * Second: CPU the client process spends checking answers (noted with
 * bench_cpu_not_client) is not counted as the client's. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define FIRST_ZYGOTE_MS 200
/* /proc counts in clock ticks (10 ms); each process read may round one away. */
#define TICK_SLACK_MS 40

static pid_t broker = -1;

static void stop_broker(void)
{
    if (broker > 0) {
        kill(broker, SIGKILL);
        waitpid(broker, NULL, 0);
    }
}

TestSuite(bench_cpu, .fini = stop_broker, .timeout = 60);

/* The stand-in broker's side: starts a zygote with a pipe on each end. */
static pid_t start_zygote(const char *exe, const char *ms, int *to_child, int *from_child)
{
    /* Close-on-exec, or the second zygote would hold the first one's stdin open. */
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        _exit(3);
    pid_t z = fork();
    if (z == 0) {
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        close(in[1]);
        close(out[0]);
        execl(exe, "bench_cpu_child", "--zygote", ms, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    *to_child = in[1];
    *from_child = out[0];
    return z;
}

/* The stand-in broker: one command byte at a time from the test, one reply
 * byte when done. '1'/'2': start zygote 1 (200 ms) / 2 (0 ms) and wait for its
 * "ready"; 'x': close zygote 1's stdin and wait for it to exit without reaping
 * it; 'r': reap it. */
static void broker_main(const char *exe, int cmd, int reply)
{
    int to[2] = { -1, -1 }, from[2] = { -1, -1 };
    pid_t z[2] = { -1, -1 };
    char c, line[16];
    char ms[16];
    while (read(cmd, &c, 1) == 1) {
        if (c == '1' || c == '2') {
            int k = c - '1';
            snprintf(ms, sizeof ms, "%d", k == 0 ? FIRST_ZYGOTE_MS : 0);
            z[k] = start_zygote(exe, ms, &to[k], &from[k]);
            if (read(from[k], line, sizeof line) <= 0)
                _exit(4);
        } else if (c == 'x') {
            close(to[0]);
            siginfo_t si;
            if (waitid(P_PID, (id_t)z[0], &si, WEXITED | WNOWAIT) != 0)
                _exit(5);
        } else if (c == 'r') {
            if (waitpid(z[0], NULL, 0) != z[0])
                _exit(6);
        }
        if (write(reply, &c, 1) != 1)
            _exit(7);
    }
    _exit(0);
}

static int cmd_fd, reply_fd;

static void tell(char c)
{
    char back = 0;
    cr_assert_eq(write(cmd_fd, &c, 1), 1);
    cr_assert_eq(read(reply_fd, &back, 1), 1, "the stand-in broker died at '%c'", c);
    cr_assert_eq(back, c);
}

static double tree_ms(const bench_env *e)
{
    bench_cpu c;
    bench_cpu_snapshot(e, &c);
    return c.broker_ms + c.workers_ms + c.zygote_ms;
}

Test(bench_cpu, a_retired_zygotes_time_is_never_lost)
{
    const char *root = getenv("VERIFETCH_BUILD_ROOT");
    cr_assert_not_null(root, "VERIFETCH_BUILD_ROOT is not set");
    char exe[4096];
    snprintf(exe, sizeof exe, "%s/tests/bench/bench_cpu_child", root);
    cr_assert_eq(access(exe, X_OK), 0, "%s is missing", exe);
    int cmd[2], reply[2];
    cr_assert_eq(pipe(cmd), 0);
    cr_assert_eq(pipe(reply), 0);
    broker = fork();
    cr_assert_geq(broker, 0);
    if (broker == 0) {
        close(cmd[1]);
        close(reply[0]);
        broker_main(exe, cmd[0], reply[1]);
    }
    close(cmd[0]);
    close(reply[1]);
    cmd_fd = cmd[1];
    reply_fd = reply[0];
    bench_env e = { .broker_pid = broker, .origin_pid = 0 };

    tell('1');
    double first = tree_ms(&e);
    cr_assert_geq(first, FIRST_ZYGOTE_MS - TICK_SLACK_MS, "the first zygote's CPU is not seen: %.0f ms", first);
    tell('2');
    double both = tree_ms(&e);
    cr_assert_geq(both, first - TICK_SLACK_MS, "two zygotes: %.0f ms, one: %.0f ms", both, first);
    tell('x');
    double zombie = tree_ms(&e);
    cr_assert_geq(zombie, both - TICK_SLACK_MS, "the retired zygote, exited and not reaped: %.0f ms, before: %.0f ms",
                  zombie, both);
    tell('r');
    double reaped = tree_ms(&e);
    cr_assert_geq(reaped, zombie - TICK_SLACK_MS, "reaped: %.0f ms, before: %.0f ms", reaped, zombie);
    cr_assert_leq(reaped, zombie + TICK_SLACK_MS, "reaped: %.0f ms counted twice? before: %.0f ms", reaped, zombie);
}

/* Spins the calling thread for ms of its own CPU time. */
static void burn_ms(double ms)
{
    double until = bench_thread_cpu_ms() + ms;
    volatile unsigned long spin = 0;
    while (bench_thread_cpu_ms() < until)
        spin++;
}

static double client_ms(void)
{
    bench_env e = { .broker_pid = 0, .origin_pid = 0 };
    bench_cpu c;
    bench_cpu_snapshot(&e, &c);
    return c.client_ms;
}

#define BURN_MS 150

Test(bench_cpu, time_noted_as_the_harnesses_is_not_the_clients)
{
    double start = client_ms();
    burn_ms(BURN_MS);
    double after_client_work = client_ms();
    cr_assert_geq(after_client_work - start, BURN_MS - TICK_SLACK_MS, "the client's own %d ms read %.0f ms",
                  BURN_MS, after_client_work - start);
    double t0 = bench_thread_cpu_ms();
    burn_ms(BURN_MS);
    bench_cpu_not_client(bench_thread_cpu_ms() - t0);
    double after_check = client_ms();
    cr_assert_leq(after_check - after_client_work, TICK_SLACK_MS, "%d ms of checking read %.0f ms of client CPU",
                  BURN_MS, after_check - after_client_work);
    cr_assert_geq(after_check - after_client_work, -TICK_SLACK_MS, "the client's CPU went back by %.0f ms",
                  after_client_work - after_check);
}
