#include "broker/spawn/worker_stderr.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/judge/safe_text.h"
#include "broker/log_limit.h"

#define LINE_MAX_BYTES 400 /* a longer line is cut, the rest of it dropped */

static int write_end = -1;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void emit(const char *line, size_t len, bool cut)
{
    if (!vf_log_limit_take("worker_stderr"))
        return;
    char safe[LINE_MAX_BYTES + 8];
    vf_ascii_line(line, len, safe, sizeof safe);
    fprintf(stderr, "verifetchd: worker stderr: %s%s\n", safe, cut ? " [cut]" : "");
}

static void *relay(void *arg)
{
    int fd = (int)(long)arg;
    char line[LINE_MAX_BYTES];
    size_t len = 0;
    bool cut = false, dropping = false;
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n') {
                if (!dropping || len)
                    emit(line, len, cut);
                len = 0;
                cut = dropping = false;
            } else if (len < sizeof line) {
                line[len++] = buf[i];
            } else if (!dropping) {
                cut = dropping = true;
            }
        }
    }
    if (len)
        emit(line, len, cut);
    close(fd);
    return NULL;
}

static void start(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    if (pthread_create(&t, &attr, relay, (void *)(long)p[0]) != 0) {
        close(p[0]);
        close(p[1]);
    } else {
        write_end = p[1];
    }
    pthread_attr_destroy(&attr);
}

int vf_worker_stderr_fd(void)
{
    pthread_once(&once, start);
    return write_end;
}
