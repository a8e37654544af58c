/* E2E: clients that attack the API server itself (issue 13 item 6, issue 14).
 * A client trickling its request head (or body) a byte at a time is closed
 * at an absolute deadline, not kept for as long as it keeps trickling, while
 * other clients are served; and a flood of bad requests gives a bounded
 * number of log lines plus one summary saying how many were held back. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile.h"
#include "serving_common.h"
#include "test_common.h"

TestSuite(hostile_clients, .init = hx_setup, .fini = hx_teardown, .timeout = 60);

static hx_origin origin;
static hx_broker broker;

/* libmicrohttpd's own timeout is 5 s of silence: a byte a second never trips it. */
#define TRICKLE_MS 1000
#define MARGIN_MS 1500
#define HEAD_DEADLINE_MS 5000.0    /* VF_SERVER_HEAD_TIMEOUT_S (broker/api/server.h) */
#define BODY_DEADLINE_MS 10000.0   /* VF_SERVER_BODY_TIMEOUT_S */
#define LOG_BURST 10               /* VF_LOG_BURST (broker/log_limit.h) */
#define LOG_WINDOW_MS 5000.0       /* LOG_WINDOW_MS */
/* The deadline watcher logs after it has shut the connection and let go of
 * its lock, so the line can land just after the client sees the close (one
 * ASan CI run read the log first). */
#define LOG_WAIT_MS 2000.0

/* Sends `rest` one byte every TRICKLE_MS (cycling) until the broker closes
 * fd or limit_ms passes since t0. Returns ms from t0 to the close, -1 if
 * still open. Bytes the broker sends (an answer) are read and ignored. */
static double trickle_until_closed(int fd, const char *rest, double t0, double limit_ms)
{
    size_t i = 0, n = strlen(rest);
    double next = hx_now_ms();
    while (hx_now_ms() - t0 < limit_ms) {
        if (hx_now_ms() >= next) {
            if (send(fd, rest + i++ % n, 1, MSG_NOSIGNAL) < 0)
                return hx_now_ms() - t0;
            next += TRICKLE_MS;
        }
        int wait = (int)(next - hx_now_ms());
        struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
        if (poll(&p, 1, wait > 0 ? wait : 0) > 0) {
            char buf[512];
            ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN) || (p.revents & (POLLHUP | POLLERR)))
                return hx_now_ms() - t0;
        }
    }
    return -1;
}

typedef struct {
    long health, lookup;
    double health_ms, lookup_ms;
} bystander;

/* Another client, 2 s into the trickle: health and a lookup are served. */
static void *serve_bystander(void *arg)
{
    bystander *b = arg;
    usleep(2000 * 1000);
    hx_response h = hx_request(&broker, "GET", "/v1/health", NULL, 0);
    b->health = h.status;
    b->health_ms = h.elapsed_ms;
    hx_response_free(&h);
    char url[256];
    hx_response l = hx_lookup(&broker, "{\"url\": \"%s\"}", hx_origin_url(&origin, false, "/page", url, sizeof url));
    b->lookup = l.status;
    b->lookup_ms = l.elapsed_ms;
    hx_response_free(&l);
    return NULL;
}

/* Opens a connection, sends `start` at once, then trickles `rest` with a
 * bystander client running meanwhile; returns ms from connect to close. */
static double trickled(const char *start, const char *rest, double limit_ms, bystander *by)
{
    int fd = sv_connect(&broker);
    double t0 = hx_now_ms();
    cr_assert_eq(send(fd, start, strlen(start), MSG_NOSIGNAL), (ssize_t)strlen(start));
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, serve_bystander, by), 0);
    double closed = trickle_until_closed(fd, rest, t0, limit_ms);
    pthread_join(t, NULL);
    close(fd);
    return closed;
}

static void assert_bystander_served(const bystander *by)
{
    cr_assert_eq(by->health, 200, "health during the trickle: HTTP %ld", by->health);
    cr_assert_eq(by->lookup, 200, "lookup during the trickle: HTTP %ld", by->lookup);
    cr_assert_lt(by->lookup_ms, 3000, "lookup during the trickle took %.0f ms", by->lookup_ms);
}

/* A head trickled a byte a second: closed 5 s after the accept (before: open
 * for as long as the client kept trickling). */
Test(hostile_clients, trickled_request_head_is_closed_at_the_head_deadline)
{
    sv_start(&origin, &broker, 2, 10000);
    bystander by = { 0 };
    double closed = trickled("GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ", "abcdefgh", 12000, &by);
    cr_log_info("trickled head closed after %.0f ms; bystander health %.1f ms, lookup %.1f ms", closed,
                by.health_ms, by.lookup_ms);
    cr_assert_geq(closed, 0, "a head trickled for 12 s is still open\n%s", hx_broker_log(&broker));
    cr_assert_leq(closed, HEAD_DEADLINE_MS + MARGIN_MS, "closed after %.0f ms", closed);
    cr_assert_geq(closed, HEAD_DEADLINE_MS - 500, "closed after %.0f ms: before the deadline", closed);
    assert_bystander_served(&by);
    cr_assert_gt(sv_await_in_log(&broker, "request head not complete in time", LOG_WAIT_MS), 0, "%s", hx_broker_log(&broker));
}

/* A complete head, then the body a byte a second: closed 10 s after the head. */
Test(hostile_clients, trickled_request_body_is_closed_at_the_body_deadline)
{
    sv_start(&origin, &broker, 2, 10000);
    bystander by = { 0 };
    double closed = trickled("POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             "Content-Length: 4000\r\n\r\n{\"url\": \"",
                             "aaaaaaaa", 20000, &by);
    cr_log_info("trickled body closed after %.0f ms", closed);
    cr_assert_geq(closed, 0, "a body trickled for 20 s is still open");
    cr_assert_leq(closed, BODY_DEADLINE_MS + MARGIN_MS, "closed after %.0f ms", closed);
    cr_assert_geq(closed, BODY_DEADLINE_MS - 500, "closed after %.0f ms: before the deadline", closed);
    assert_bystander_served(&by);
    cr_assert_gt(sv_await_in_log(&broker, "request body not complete in time", LOG_WAIT_MS), 0, "%s", hx_broker_log(&broker));
}

/* Reads one answer (head + Content-Length body) off fd; returns its status. */
static int read_answer(int fd)
{
    char buf[8192];
    size_t len = 0;
    char *end = NULL;
    double t0 = hx_now_ms();
    while (hx_now_ms() - t0 < 5000 && len < sizeof buf - 1) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t got = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (got <= 0)
            break;
        len += (size_t)got;
        buf[len] = '\0';
        if ((end = strstr(buf, "\r\n\r\n"))) {
            const char *cl = hx_contains_ci(buf, "content-length:") ? strcasestr(buf, "content-length:") : NULL;
            size_t want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
            if (len >= want)
                break;
        }
    }
    int status = 0;
    return sscanf(buf, "HTTP/1.1 %d", &status) == 1 ? status : 0;
}

/* Keep-alive gives no way around it: after an answer, the next head is due
 * within 5 s too, however it trickles. */
Test(hostile_clients, keep_alive_does_not_reset_the_head_deadline)
{
    sv_start(&origin, &broker, 2, 10000);
    int fd = sv_connect(&broker);
    static const char first[] = "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n";
    cr_assert_eq(send(fd, first, sizeof first - 1, MSG_NOSIGNAL), (ssize_t)(sizeof first - 1));
    cr_assert_eq(read_answer(fd), 200);
    double t0 = hx_now_ms();
    double closed = trickle_until_closed(fd, "GET /v1/health HTTP/1.1\r\nX-Slow: abcdefgh", t0, 12000);
    close(fd);
    cr_log_info("second head on a kept-alive connection closed after %.0f ms", closed);
    cr_assert_geq(closed, 0, "a trickled second head is still open after 12 s");
    cr_assert_leq(closed, HEAD_DEADLINE_MS + MARGIN_MS, "closed after %.0f ms", closed);
}

/* ---- log flood ---------------------------------------------------------------- */

#define FLOOD 300

static char *bad_body(size_t i, void *arg)
{
    (void)arg;
    char *body = NULL;
    if (asprintf(&body, "{\"url\": %zu", i) < 0)   /* never valid JSON */
        return NULL;
    return body;
}

/* Sum of "suppressed" over log_suppressed lines of this kind. */
static long suppressed_of(const char *kind, size_t *lines)
{
    char *log = hx_read_file(broker.stderr_path, NULL);
    long sum = 0;
    *lines = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *doc = json_loads(line, 0, NULL);
        const char *event = json_string_value(json_object_get(doc, "event"));
        if (event && strcmp(event, "log_suppressed") == 0 &&
            strcmp(json_string_value(json_object_get(doc, "kind")), kind) == 0) {
            sum += (long)json_integer_value(json_object_get(doc, "suppressed"));
            ++*lines;
        }
        json_decref(doc);
    }
    free(log);
    return sum;
}

/* 300 bad requests: each answered 400, but the log gets at most
 * LOG_BURST bad_request lines a window and one summary that accounts for
 * every line held back (before: one line per request, ~31,000 lines in 16 s
 * under fd exhaustion). */
Test(hostile_clients, bad_request_flood_gives_bounded_log_lines_and_a_summary)
{
    sv_start(&origin, &broker, 2, 10000);
    static hh_reply replies[FLOOD];
    double t0 = hx_now_ms();
    hh_lookups(broker.socket_path, FLOOD, 8, bad_body, NULL, 10000, replies);
    double took = hx_now_ms() - t0;
    size_t bad = 0;
    for (size_t i = 0; i < FLOOD; i++) {
        bad += replies[i].status == 400;
        hh_reply_free(&replies[i]);
    }
    cr_assert_eq(bad, FLOOD, "only %zu of %d bad requests answered 400", bad, FLOOD);
    size_t summaries = 0;
    long held = 0;
    double wait0 = hx_now_ms();
    while ((held = suppressed_of("bad_request", &summaries)) + (long)sv_count_in_log(&broker, "\"event\":\"bad_request\"") <
               FLOOD && hx_now_ms() - wait0 < 12000)
        usleep(100 * 1000);
    size_t lines = sv_count_in_log(&broker, "\"event\":\"bad_request\"");
    double windows = 1 + took / LOG_WINDOW_MS;
    cr_log_info("%d bad requests in %.0f ms: %zu bad_request lines, %zu summaries holding back %ld", FLOOD, took,
                lines, summaries, held);
    cr_assert_gt(summaries, 0, "no summary line after 12 s:\n%s", hx_broker_log(&broker));
    cr_assert_leq((double)lines, windows * LOG_BURST, "%zu bad_request lines for %d requests", lines, FLOOD);
    cr_assert_leq((double)summaries, windows + 1, "%zu summary lines", summaries);
    cr_assert_eq((long)lines + held, FLOOD, "%zu lines + %ld held back != %d requests", lines, held, FLOOD);
}

/* ---- hang-up burst ------------------------------------------------------------ */

#define HANGUPS 32
#define BURST_SLOTS 4
#ifdef HH_UNDER_ASAN
#define RELEASE_BOUND_MS 1000.0
#else
#define RELEASE_BOUND_MS 250.0   /* the target is 100 ms; this host is shared and loaded */
#endif

static json_t *pool_now(void)
{
    hx_response r = hx_request(&broker, "GET", "/v1/health", NULL, 0);
    cr_assert_eq(r.status, 200);
    json_t *pool = json_incref(json_object_get(r.json, "pool"));
    hx_response_free(&r);
    return pool;
}

static long field(json_t *pool, const char *name)
{
    return (long)json_integer_value(json_object_get(pool, name));
}

/* 32 clients whose lookups hang at the origin (4 running, the rest queued
 * or refused 503) all give up at once: every slot and admission is free
 * again, and every worker gone, within RELEASE_BOUND_MS of the hang-up
 * (before: held until the 10 s deadline). */
Test(hostile_clients, hangup_burst_releases_every_slot_and_worker)
{
    sv_start(&origin, &broker, BURST_SLOTS, 10000);
    hh_usage base = hh_usage_steady(broker.pid, 3000);
    int fds[HANGUPS];
    char url[256], path[64];
    for (int i = 0; i < HANGUPS; i++) {
        snprintf(path, sizeof path, "/hang?burst=%d", i);
        fds[i] = sv_send_lookup(&broker, hx_origin_url(&origin, false, path, url, sizeof url));
    }
    json_t *busy = NULL;
    double t0 = hx_now_ms();
    do {
        json_decref(busy);
        usleep(20 * 1000);
        busy = pool_now();
    } while (field(busy, "in_use") < BURST_SLOTS && hx_now_ms() - t0 < 5000);
    long admitted = field(busy, "admitted");
    cr_assert_eq(field(busy, "in_use"), BURST_SLOTS, "the hanging lookups never took every slot");
    json_decref(busy);
    usleep(300 * 1000);
    for (int i = 0; i < HANGUPS; i++)
        close(fds[i]);
    double hung_up = hx_now_ms(), released = -1, workers_gone = -1;
    while (hx_now_ms() - hung_up < 5000 && (released < 0 || workers_gone < 0)) {
        json_t *pool = released < 0 ? pool_now() : NULL;
        if (pool && field(pool, "in_use") == 0 && field(pool, "admitted") == 0 && field(pool, "waiting_for_slot") == 0)
            released = hx_now_ms() - hung_up;
        json_decref(pool);
        if (workers_gone < 0 && hh_usage_of(broker.pid).procs <= base.procs)
            workers_gone = hx_now_ms() - hung_up;
        usleep(2000);
    }
    cr_log_info("%d clients (%ld admitted, %d running) hung up: slots and admissions free after %.0f ms, "
                "workers gone after %.0f ms", HANGUPS, admitted, BURST_SLOTS, released, workers_gone);
    cr_assert_geq(released, 0, "slots still held 5 s after the hang-up\n%s", hx_broker_log(&broker));
    cr_assert_geq(workers_gone, 0, "workers still running 5 s after the hang-up");
    cr_assert_leq(released, RELEASE_BOUND_MS, "slots released %.0f ms after the hang-up", released);
    cr_assert_leq(workers_gone, RELEASE_BOUND_MS, "workers gone %.0f ms after the hang-up", workers_gone);
    hx_assert_no_sanitizer_report(&broker);
}
