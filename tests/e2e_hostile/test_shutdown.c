/* E2E: graceful shutdown. SIGTERM while lookups are in flight must stop new
 * connections at once, give every in-flight client a complete answer (the
 * lookup's own result, or a clear error, never a reset), kill and reap every
 * worker, remove the socket and exit 0 within timeout + 2 s. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile.h"
#include "test_common.h"

TestSuite(shutdown, .init = hx_setup, .fini = hx_teardown, .timeout = 40);

#define IN_FLIGHT 8
#define TIMEOUT_MS 5000u
#define TERM_AFTER_MS 300

static tc_env t;
static const char *slow_path;

typedef struct {
    const char *socket_path;
    hh_reply replies[IN_FLIGHT];
} flight;

static char *body_for(size_t i, void *arg)
{
    char *body = NULL, path[128];
    snprintf(path, sizeof path, "%s&n=%zu", (const char *)arg, i);   /* distinct URLs */
    if (asprintf(&body, "{\"url\": \"http://127.0.0.1:%d%s\"}", t.origin.port, path) < 0)
        return NULL;
    return body;
}

static void *run_flight(void *arg)
{
    flight *f = arg;
    hh_lookups(f->socket_path, IN_FLIGHT, IN_FLIGHT, body_for, (void *)slow_path, 20000, f->replies);
    return NULL;
}

static bool socket_connects(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t len = strlen(path);
    if (fd < 0 || len >= sizeof sa.sun_path) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    memcpy(sa.sun_path, path, len + 1);
    bool ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

static bool exited_within(pid_t pid, double ms, int *status)
{
    double deadline = hx_now_ms() + ms;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return true;
        if ((r < 0 && errno != EINTR) || hx_now_ms() >= deadline)
            return false;
        usleep(5000);
    }
}

/* The lookup's own answer, or one that clearly says the broker is stopping. */
static void check_reply(size_t i, hh_reply *reply, bool may_succeed)
{
    cr_assert_eq(reply->curl_code, 0, "client %zu: no complete answer (curl %d) after %.0f ms", i,
                 reply->curl_code, reply->elapsed_ms);
    hx_response r = hh_as_response(reply);
    cr_assert_not_null(r.json, "client %zu: answer is not JSON (HTTP %ld): %s", i, r.status, r.body);
    if (r.status == 503) {
        const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
        cr_assert(msg && *msg, "client %zu: 503 without an error message: %s", i, r.body);
    } else {
        char url[256];
        json_t *receipt = hx_receipt(&r);
        snprintf(url, sizeof url, "%s", json_string_value(json_object_get(receipt, "url")));
        bool ok = json_is_true(json_object_get(receipt, "ok"));
        cr_assert(!ok || may_succeed, "client %zu: a lookup that cannot succeed said ok: %s", i, r.body);
        hx_receipt_expect e = ok ? tc_expect_one(true, url, "ok", 200, "usable content")
                                 : tc_expect_one(false, url, "transport_error", HX_ANY, NULL);
        if (!ok && may_succeed) {
            /* Cut short by the shutdown: it has to say so. */
            const char *const any[4] = { "shut", "stop", "cancel", "terminat" };
            memcpy(e.attempts[0].detail_any, any, sizeof any);
        }
        free(hx_check_tool_result(&r, &e));
    }
    hx_response_free(&r);
}

static void sigterm_mid_flight(const char *path, bool may_succeed)
{
    slow_path = path;
    tc_start(&t, NULL);
    cr_assert_eq(t.opts.timeout_ms, TIMEOUT_MS);
    static flight f;
    f.socket_path = t.broker.socket_path;
    pthread_t clients;
    cr_assert_eq(pthread_create(&clients, NULL, run_flight, &f), 0);
    /* SIGTERM once every lookup has its worker, and not before 300 ms. */
    pid_t broker = t.broker.pid;
    double t0 = hx_now_ms();
    size_t workers = 0;
    while ((workers = pi_descendants(broker, NULL, 0)) < IN_FLIGHT && hx_now_ms() - t0 < 3000)
        usleep(10000);
    double since = hx_now_ms() - t0;
    if (since < TERM_AFTER_MS)
        usleep((useconds_t)((TERM_AFTER_MS - since) * 1000));
    cr_assert_eq(kill(broker, SIGTERM), 0);
    double termed = hx_now_ms();

    /* Stop accepting: the socket goes away before the in-flight work drains. */
    bool refused = false;
    while (hx_now_ms() - termed < 1000) {
        refused = !socket_connects(t.broker.socket_path);
        if (refused)
            break;
        usleep(10000);
    }
    int st = 0;
    bool exited = exited_within(broker, TIMEOUT_MS + 2000 - (hx_now_ms() - termed), &st);
    double exit_ms = hx_now_ms() - termed;
    if (!exited) {
        kill(broker, SIGKILL);
        waitpid(broker, &st, 0);
    }
    pthread_join(clients, NULL);
    t.broker.pid = 0;

    cr_assert_geq(workers, IN_FLIGHT, "expected %d workers in flight at SIGTERM, saw %zu", IN_FLIGHT, workers);
    cr_assert(refused, "verifetchd still accepted connections 1 s after SIGTERM");
    cr_assert(exited, "verifetchd still running %u ms after SIGTERM\nstderr: %s", TIMEOUT_MS + 2000,
              hx_broker_log(&t.broker));
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "verifetchd exit status 0x%x after SIGTERM\nstderr: %s",
              st, hx_broker_log(&t.broker));
    cr_assert(access(t.broker.socket_path, F_OK) != 0, "socket %s left behind", t.broker.socket_path);
    hx_assert_no_sanitizer_report(&t.broker);

    /* Workers orphaned by the broker would have been re-parented to us. */
    pid_t kids[16];
    size_t n = pi_children(getpid(), kids, 16);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(kids[i], t.origin.pid, "process %d left after verifetchd exited", (int)kids[i]);

    size_t cut = 0;
    for (size_t i = 0; i < IN_FLIGHT; i++)
        cut += f.replies[i].curl_code != 0;
    cr_assert_eq(cut, 0, "%zu of %d in-flight clients got no complete answer (first: curl %d after %.0f ms); "
                 "verifetchd exited %.0f ms after SIGTERM", cut, IN_FLIGHT, f.replies[0].curl_code,
                 f.replies[0].elapsed_ms, exit_ms);
    for (size_t i = 0; i < IN_FLIGHT; i++)
        check_reply(i, &f.replies[i], may_succeed);
}

/* Lookups that would finish in 2 s, well inside their 5 s timeout. */
Test(shutdown, sigterm_answers_every_in_flight_lookup)
{
    sigterm_mid_flight("/slow?ms=2000", true);
}

/* Lookups that can only end at their deadline: shutdown still ends within
 * timeout + 2 s and every client still hears why. */
Test(shutdown, sigterm_with_hung_origins_still_answers_and_exits)
{
    sigterm_mid_flight("/hang?x=1", false);
}
