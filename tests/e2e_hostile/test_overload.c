/* E2E: how an overload is refused (issue 14). A full admission queue is
 * answered 503 from the request head, before the body is read; and the
 * Retry-After each refused caller gets is its place behind the callers
 * already refused, at the rate the queue drains, so well-behaved clients
 * come back spread out instead of all together a second later. */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile.h"
#include "serving_common.h"
#include "test_common.h"

TestSuite(overload, .init = hx_setup, .fini = hx_teardown, .timeout = 90);

static hx_origin origin;
static hx_broker broker;

/* One slot, a queue of 16: the tenant holds 17 lookups at most. */
#define ADMITTED 17
#define LOAD_MS 8000.0
#define SLOW_MS 200

static char *slow_body(size_t i, void *arg)
{
    (void)arg;
    return hh_slow_lookup_body(&origin, SLOW_MS, i);
}

/* The load: ADMITTED threads, each sending its next lookup as soon as the
 * last is answered: the queue stays full for LOAD_MS, and lookups keep
 * finishing, so the broker measures how fast it drains.
 * Beside them, for a_connection_wakes_one_server_thread, SPARE_LOADERS more:
 * on a slow, busy host a loader takes a while to send its next lookup after
 * an answer, and with exactly ADMITTED of them a place was free most of the
 * time (one CI run: 0 of 800 probes refused).
 * A thread that is refused (a spare, or a loader whose place a spare or a
 * probe took) asks again after PACE_US, not at once: a refusal takes ~50 us
 * on a fast host, and threads asking at once spent their whole budget within
 * a second or two, leaving the queue with free places before the probes
 * began ("only 0 refusals", most often on a busy host). At most
 * SPARE_LOADERS threads are outside the places at any time, one request per
 * PACE_US each: 8 x 500/s x 8 s = 32,000 per group at most. */
#define SPARE_LOADERS 8
#define PACE_US 2000
#define LOAD_MAX 40000
#define SPARE_MAX 40000
static hh_reply load_replies[LOAD_MAX];
static hh_reply spare_replies[SPARE_MAX];
static double load_until;

typedef struct {
    unsigned loaders;
    size_t max;
    hh_reply *out;
    size_t issued;     /* how many requests the group sent */
} load_plan;

typedef struct {
    pthread_t admitted, spare;
    bool with_spares;
} load;

static load_plan admitted_plan = { ADMITTED, LOAD_MAX, load_replies, 0 };
static load_plan spare_plan = { SPARE_LOADERS, SPARE_MAX, spare_replies, 0 };

static void *keep_full(void *arg)
{
    load_plan *p = arg;
    p->issued = hh_lookups_paced(broker.socket_path, p->max, p->loaders, slow_body, NULL, 30000, load_until,
                                 PACE_US, p->out);
    return NULL;
}

static void start_full_with(load *l, bool with_spares)
{
    sv_start(&origin, &broker, 1, 30000);
    load_until = hx_now_ms() + LOAD_MS;
    l->with_spares = with_spares;
    cr_assert_eq(pthread_create(&l->admitted, NULL, keep_full, &admitted_plan), 0);
    if (with_spares)
        cr_assert_eq(pthread_create(&l->spare, NULL, keep_full, &spare_plan), 0);
    usleep(1500 * 1000);   /* full, and a few lookups have finished */
}

static void start_full(load *l)
{
    start_full_with(l, false);
}

static void stop_load(load *l)
{
    pthread_join(l->admitted, NULL);
    if (l->with_spares)
        pthread_join(l->spare, NULL);
    cr_log_info("the load sent %zu requests (budget %d), the spares %zu (budget %d)", admitted_plan.issued,
                LOAD_MAX, l->with_spares ? spare_plan.issued : 0, SPARE_MAX);
    cr_expect_lt(admitted_plan.issued, LOAD_MAX, "the load ran out of requests before its time");
    for (size_t i = 0; i < LOAD_MAX; i++)
        hh_reply_free(&load_replies[i]);
    for (size_t i = 0; l->with_spares && i < SPARE_MAX; i++)
        hh_reply_free(&spare_replies[i]);
}

/* The status and Retry-After of the answer on fd, within timeout_ms; status
 * 0 when no complete head came. */
static long answer_of(int fd, unsigned timeout_ms, long *retry_after)
{
    char buf[4096];
    size_t len = 0;
    double until = hx_now_ms() + timeout_ms;
    *retry_after = -1;
    while (len < sizeof buf - 1) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int left = (int)(until - hx_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return 0;
        ssize_t n = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0)
            return 0;
        len += (size_t)n;
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (!end)
            continue;
        *end = '\0';
        for (char *line = strstr(buf, "\r\n"); line; line = strstr(line + 2, "\r\n"))
            if (strncasecmp(line + 2, "Retry-After:", 12) == 0)
                *retry_after = atol(line + 14);
        return strncmp(buf, "HTTP/1.1 ", 9) == 0 ? atol(buf + 9) : 0;
    }
    return 0;
}

#define PROBES 10

/* Refused one after another, callers are told to wait longer and longer:
 * about one more second for every second's worth of lookups the queue
 * finishes. (Before: every one was told 1 s.) */
Test(overload, retry_after_is_the_callers_place_at_the_drain_rate)
{
    load loader;
    start_full(&loader);
    long waits[PROBES];
    size_t refused = 0;
    /* A refusal comes at once; a probe that slipped into a freed place is
     * queued, not refused, and is given up after 300 ms (on a loaded host
     * the loader can leave places free for a while), while the load lasts. */
    for (size_t i = 0; refused < PROBES && i < 4 * PROBES && hx_now_ms() < load_until - 500; i++) {
        char path[64], url[256];
        snprintf(path, sizeof path, "/slow?ms=%d&n=probe%zu", SLOW_MS, i);
        int fd = sv_send_lookup(&broker, hx_origin_url(&origin, false, path, url, sizeof url));
        long wait = 0;
        long status = answer_of(fd, 300, &wait);
        close(fd);
        if (status == 503)
            waits[refused++] = wait;
    }
    stop_load(&loader);
    char told[PROBES * 8 + 1] = "";
    size_t len = 0;
    for (size_t i = 0; i < refused; i++)
        len += (size_t)snprintf(told + len, sizeof told - len, " %ld", waits[i]);
    cr_log_info("Retry-After of %zu refused probes:%s", refused, told);
    cr_assert_geq(refused, PROBES / 2, "only %zu of %d probes were refused: the queue was not full", refused,
                  PROBES);
    for (size_t i = 0; i < refused; i++) {
        cr_assert_geq(waits[i], 1, "probe %zu got no Retry-After:%s", i, told);
        cr_assert(i == 0 || waits[i] >= waits[i - 1], "a later caller was told a shorter wait:%s", told);
    }
    /* One slot, 200 ms lookups: at most ~5 a second drain, so ten refused
     * callers cannot all come back within the same second. */
    cr_assert_geq(waits[refused - 1], 2, "every refused caller was told the same wait:%s", told);
    hx_assert_no_sanitizer_report(&broker);
}

/* A full queue is answered from the head: the caller does not have to send
 * its body first (before, the broker read and parsed the body, then refused,
 * so a head whose body never comes got no answer). The loader leaves a place
 * free for a moment between a lookup's answer and its next request; a head
 * that arrives then is let through to send its body, so a few are tried. */
Test(overload, a_full_queue_is_refused_before_the_body)
{
    load loader;
    start_full(&loader);
    const char head[] = "POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Content-Length: 64\r\n\r\n";
    long status = 0, wait = 0;
    int tries = 0;
    while (status != 503 && tries++ < 10) {
        int fd = sv_connect(&broker);
        cr_assert_eq(send(fd, head, sizeof head - 1, MSG_NOSIGNAL), (ssize_t)(sizeof head - 1));
        status = answer_of(fd, 500, &wait);
        close(fd);
    }
    stop_load(&loader);
    cr_assert_eq(status, 503, "no 503 to a head whose body never came in %d tries (last status %ld)", tries - 1,
                 status);
    cr_assert_geq(wait, 1, "the 503 carries a Retry-After");
    hx_assert_no_sanitizer_report(&broker);
}

/* The broker's server threads (libmicrohttpd names them "MHD-..."; the
 * lookup threads it starts rename themselves VF_WORK_THREAD_NAME, and wake
 * for every admitted probe and finished load lookup) and how many times
 * each has gone to sleep and woken so far. */
#define MAX_THREADS 256
typedef struct {
    long tid;
    long wakes;
} thread_wakes;

static size_t server_thread_wakes(pid_t pid, thread_wakes *out)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < MAX_THREADS;) {
        char path[400], line[256];
        snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        bool server = false;
        long wakes = -1;
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "Name:\tMHD-", 10) == 0)
                server = true;
            sscanf(line, "voluntary_ctxt_switches: %ld", &wakes);
        }
        fclose(f);
        if (server && wakes >= 0)
            out[n++] = (thread_wakes){ .tid = atol(e->d_name), .wakes = wakes };
    }
    closedir(d);
    return n;
}

#define REFUSED_IN_A_ROW 200

/* A new connection wakes one server thread, not every thread of the
 * listener. (There were two per listener, both waiting on the listening
 * socket: each connection woke both, one of them to find nothing to accept;
 * 1.7 wake-ups per refused connection here, ~3 against a slower client, and
 * ~45 us of broker CPU per refusal instead of ~35.) */
Test(overload, a_connection_wakes_one_server_thread)
{
    load loader;
    start_full_with(&loader, true);
    thread_wakes before[MAX_THREADS], after[MAX_THREADS];
    size_t n_before = server_thread_wakes(broker.pid, before);
    size_t refused = 0;
    for (size_t i = 0; i < 4 * REFUSED_IN_A_ROW && refused < REFUSED_IN_A_ROW; i++) {
        int fd = sv_send_lookup(&broker, "http://127.0.0.1:9/never-fetched");
        long wait = 0;
        refused += answer_of(fd, 2000, &wait) == 503;
        close(fd);
    }
    size_t n_after = server_thread_wakes(broker.pid, after);
    stop_load(&loader);
    cr_assert_geq(refused, REFUSED_IN_A_ROW / 2, "only %zu refusals: the queue was not full", refused);
    size_t woken = 0;
    for (size_t i = 0; i < n_after; i++)
        for (size_t j = 0; j < n_before; j++) {
            long woke = after[i].wakes - before[j].wakes;
            if (after[i].tid != before[j].tid || woke < 10)
                continue;
            cr_log_info("thread %ld woke %ld times for %zu refused connections", after[i].tid, woke, refused);
            woken += woke >= (long)refused / 4;
        }
    cr_assert_leq(woken, 1, "%zu server threads each woke for a quarter or more of %zu connections", woken,
                  refused);
    hx_assert_no_sanitizer_report(&broker);
}
