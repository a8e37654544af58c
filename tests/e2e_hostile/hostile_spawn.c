/* Starting the hostile origin and a broker from a caller-written config. Both
 * die with the test process (parent-death signal); the harness teardown kills
 * and reaps whatever is left among our children. */
#include "hostile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#define HH_START_MS 10000

static void fmt(char *buf, size_t len, const char *f, const char *a, const char *b)
{
    int n = snprintf(buf, len, f, a, b);
    cr_assert(n >= 0 && (size_t)n < len, "path too long: %s", buf);
}

static pid_t spawn(char *const argv[], int in_fd, int out_fd, int err_fd, int deathsig)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, deathsig);
    if (getppid() != parent)
        _exit(127);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    closefrom(3);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv);
    _exit(127);
}

/* Reads "KEY value" lines from fd until `want` lines arrived or the deadline. */
static size_t read_lines(int fd, char *buf, size_t cap, size_t want, unsigned timeout_ms)
{
    size_t n = 0, lines = 0;
    double deadline = hx_now_ms() + timeout_ms;
    while (lines < want && n + 1 < cap) {
        int left = (int)(deadline - hx_now_ms());
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        ssize_t got = read(fd, buf + n, 1);
        if (got <= 0)
            break;
        lines += buf[n] == '\n';
        n++;
    }
    buf[n] = '\0';
    return lines;
}

void hh_origin_start(hh_origin *o, unsigned max_lifetime_s)
{
    memset(o, 0, sizeof *o);
    char script[PATH_MAX], err_path[PATH_MAX], life[16];
    const char *src = getenv("VERIFETCH_SOURCE_ROOT");
    cr_assert_not_null(src, "VERIFETCH_SOURCE_ROOT is not set (run through meson test)");
    fmt(script, sizeof script, "%s/%s", src, "tests/e2e_hostile/hostile_origin.py");
    fmt(err_path, sizeof err_path, "%s/%s", hx_tmpdir(), "hostile_origin.err");
    snprintf(life, sizeof life, "%u", max_lifetime_s);
    /* The system interpreter starts much faster than a pyenv shim. */
    const char *python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char *argv[] = { (char *)python, script, "--port", "0", "--max-lifetime", life, NULL };

    int in[2], out[2];
    cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(err >= 0);
    o->pid = spawn(argv, in[0], out[1], err, SIGKILL);
    close(in[0]);
    close(out[1]);
    close(err);
    cr_assert(o->pid > 0, "cannot spawn hostile_origin.py");
    /* in[1] stays open for the test's lifetime: its EOF also stops the origin. */
    char text[256];
    read_lines(out[0], text, sizeof text, 3, HH_START_MS);
    close(out[0]);
    char brotli[8] = "", zstd[8] = "";
    int got = sscanf(text, "PORT %d\nBROTLI %7s\nZSTD %7s", &o->port, brotli, zstd);
    char *errs = hx_read_file(err_path, NULL);
    cr_assert(got == 3 && o->port > 0, "hostile_origin.py did not report its port (got '%s'): %s", text,
              errs ? errs : "");
    free(errs);
    o->brotli = strcmp(brotli, "yes") == 0;
    o->zstd = strcmp(zstd, "yes") == 0;
}

const char *hh_url(const hh_origin *o, const char *path, char *buf, size_t len)
{
    int n = snprintf(buf, len, "http://127.0.0.1:%d%s", o->port, path);
    cr_assert(n > 0 && (size_t)n < len, "URL too long for its buffer: %s", path);
    return buf;
}

static bool socket_accepts(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t len = strlen(path);
    if (len >= sizeof sa.sun_path) {
        close(fd);
        return false;
    }
    memcpy(sa.sun_path, path, len + 1);
    bool ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

void hh_broker_start(hx_broker *b, const char *config_body)
{
    static unsigned seq;
    char name[32], out_path[PATH_MAX], bin[PATH_MAX];
    memset(b, 0, sizeof *b);
    snprintf(name, sizeof name, "hb%u", seq++);
    fmt(b->socket_path, sizeof b->socket_path, "%s/%s.sock", hx_tmpdir(), name);
    fmt(b->config_path, sizeof b->config_path, "%s/%s.conf", hx_tmpdir(), name);
    fmt(b->stderr_path, sizeof b->stderr_path, "%s/%s.err", hx_tmpdir(), name);
    fmt(out_path, sizeof out_path, "%s/%s.out", hx_tmpdir(), name);
    hx_build_path("broker/verifetchd", bin, sizeof bin);
    cr_assert(access(bin, X_OK) == 0, "%s is not built", bin);

    FILE *f = fopen(b->config_path, "we");
    cr_assert_not_null(f, "cannot write %s", b->config_path);
    fprintf(f, "# generated by tests/e2e_hostile/hostile_spawn.c\n"
               "listen = { socket = \"%s\"; mode = 0600; };\n%s\n", b->socket_path, config_body);
    fclose(f);

    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err = open(b->stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(in >= 0 && out >= 0 && err >= 0);
    char *argv[] = { bin, "--config", b->config_path, NULL };
    b->pid = spawn(argv, in, out, err, SIGTERM);
    close(in);
    close(out);
    close(err);
    cr_assert(b->pid > 0, "cannot spawn verifetchd");

    double deadline = hx_now_ms() + HH_START_MS;
    while (hx_now_ms() < deadline) {
        int st = 0;
        if (waitpid(b->pid, &st, WNOHANG) == b->pid) {
            b->pid = 0;
            cr_assert_fail("verifetchd exited early (status 0x%x)\nstderr: %s", st, hx_broker_log(b));
        }
        char *text = hx_read_file(out_path, NULL);
        bool listening = text && strstr(text, "verifetchd: listening on unix:");
        free(text);
        if (listening && socket_accepts(b->socket_path))
            return;
        usleep(10000);
    }
    cr_assert_fail("verifetchd not ready within %d ms\nstderr: %s", HH_START_MS, hx_broker_log(b));
}
