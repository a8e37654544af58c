/* Keys never enter a worker. This process plays the broker: it loads a config
 * whose http_api provider reads a canary key from a key_file, so the canary
 * sits in its memory exactly where the broker's would. Then every readable
 * byte of the zygote and of live workers (zygote-forked and exec'd through
 * vf_worker_run) is read via /proc/<pid>/maps + /proc/<pid>/mem, with their
 * environ and cmdline, and the canary must be absent. A plain fork of this
 * process is scanned the same way and must contain it, which shows the scan
 * sees what it should. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/spawn/worker_run.h"
#include "broker/spawn/zygote_client.h"
#include "harness.h"
#include "proc_inspect.h"
#include "policy/config.h"

#define CHUNK (1u << 20)

static char canary[48];
static char dir[64];
static vf_config cfg;

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    cr_assert(fd >= 0, "create %s", path);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* A config like a deployment's: the key comes from a 0600 file at load. */
static void load_canary_config(void)
{
    unsigned char r[16];
    cr_assert_eq(getrandom(r, sizeof r, 0), (ssize_t)sizeof r);
    int n = snprintf(canary, sizeof canary, "vfcanary");
    for (size_t i = 0; i < sizeof r; i++)
        n += snprintf(canary + n, sizeof canary - (size_t)n, "%02x", r[i]);
    snprintf(dir, sizeof dir, "/tmp/vf-nokeys-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char key[128], conf[128], text[2048];
    snprintf(key, sizeof key, "%s/fetcher.key", dir);
    snprintf(conf, sizeof conf, "%s/verifetch.conf", dir);
    write_file(key, canary, 0600);
    snprintf(text, sizeof text,
             "worker = { path = \"%s\"; ca_file = \"/etc/ssl/certs/ca-certificates.crt\"; };\n"
             "tenants = ( { name = \"default\"; providers = ( { name = \"fetcher\"; kind = \"http_api\";\n"
             "  endpoint = \"https://api.fetcher.example/v1/fetch?url={url}\";\n"
             "  credential = { header = \"Authorization\"; format = \"Bearer {key}\"; key_file = \"%s\"; };\n"
             "  response = { mode = \"raw\"; }; } ); } );\n",
             worker_path("verifetch-worker-testhooks"), key);
    write_file(conf, text, 0600);
    char err[512];
    cr_assert_eq(vf_config_load(conf, &cfg, err, sizeof err), 0, "config: %s", err);
    cr_assert_eq(cfg.n_tenants, 1);
    cr_assert_str_eq(cfg.tenants[0].providers[0].secret, canary, "the key really is in our memory");
}

static void cleanup(void)
{
    vf_zygote_stop();
    vf_config_free(&cfg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

TestSuite(no_keys, .init = load_canary_config, .fini = cleanup, .timeout = 90);

typedef struct {
    size_t hits;
    size_t scanned;
} scan;

static void search(const char *buf, size_t n, scan *s)
{
    size_t len = strlen(canary);
    for (const char *p = buf; n >= len;) {
        const char *hit = memmem(p, n, canary, len);
        if (!hit)
            break;
        s->hits++;
        n -= (size_t)(hit - p) + 1;
        p = hit + 1;
    }
}

/* Reserved address space this large is a sanitizer's shadow or allocator
 * reserve (a production worker is capped far below by RLIMIT_AS); it holds no
 * data of its own and cannot be walked page by page in reasonable time. */
#define HUGE_REGION (64ull << 30)
#define PAGEMAP_BATCH 4096u

/* Searches the present pages of [start, end), runs of adjacent present pages
 * read as one, with the canary's length of overlap carried between reads. */
static void scan_region(int mem, int pagemap, unsigned long start, unsigned long end, char *buf,
                        scan *s)
{
    const unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
    size_t overlap = strlen(canary) - 1;
    size_t carried = 0;
    uint64_t entries[PAGEMAP_BATCH];
    for (unsigned long at = start; at < end;) {
        size_t n = (size_t)((end - at) / page);
        if (n > PAGEMAP_BATCH)
            n = PAGEMAP_BATCH;
        ssize_t got = pread(pagemap, entries, n * sizeof entries[0], (off_t)(at / page * sizeof entries[0]));
        if (got <= 0)
            return;
        n = (size_t)got / sizeof entries[0];
        for (size_t i = 0; i < n;) {
            if (!(entries[i] >> 63 & 1)) { /* not present: nothing there to leak */
                carried = 0;
                i++;
                continue;
            }
            size_t run = i;
            while (run < n && (entries[run] >> 63 & 1) && (run - i + 1) * page <= CHUNK)
                run++;
            size_t want = (run - i) * page;
            ssize_t k = pread(mem, buf + carried, want, (off_t)(at + i * page));
            if (k > 0) {
                s->scanned += (size_t)k;
                size_t total = carried + (size_t)k;
                search(buf, total, s);
                carried = total < overlap ? total : overlap;
                memmove(buf, buf + total - carried, carried);
            } else {
                carried = 0; /* [vvar] and friends refuse reads */
            }
            i = run;
        }
        at += n * page;
    }
}

/* Every readable mapping of pid, through /proc/<pid>/maps, pagemap and mem. */
static scan scan_memory(pid_t pid)
{
    scan s = { 0 };
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "re");
    cr_assert_not_null(maps, "open %s", path);
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int mem = open(path, O_RDONLY | O_CLOEXEC);
    cr_assert(mem >= 0, "open %s", path);
    snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
    int pagemap = open(path, O_RDONLY | O_CLOEXEC);
    cr_assert(pagemap >= 0, "open %s", path);
    char *buf = malloc(CHUNK + strlen(canary));
    cr_assert_not_null(buf);
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[0] != 'r' ||
            end - start >= HUGE_REGION)
            continue;
        scan_region(mem, pagemap, start, end, buf, &s);
    }
    free(buf);
    close(pagemap);
    close(mem);
    fclose(maps);
    return s;
}

static void assert_clean(pid_t pid, const char *who, const char *want_cmdline, size_t cmdline_len)
{
    scan s = scan_memory(pid);
    cr_assert_gt(s.scanned, 1u << 20, "%s: only %zu bytes readable", who, s.scanned);
    cr_assert_eq(s.hits, 0, "%s holds the key (%zu copies in %zu bytes)", who, s.hits, s.scanned);
    size_t n = 0;
    char *env = pi_read(pid, "environ", &n);
    cr_assert_not_null(env, "%s: environ unreadable", who);
    cr_assert_eq(n, 0, "%s has an environment", who);
    free(env);
    char *cmd = pi_read(pid, "cmdline", &n);
    cr_assert_not_null(cmd, "%s: cmdline unreadable", who);
    cr_assert_eq(n, cmdline_len, "%s cmdline length", who);
    cr_assert_eq(memcmp(cmd, want_cmdline, n), 0, "%s cmdline", who);
    cr_assert_null(memmem(cmd, n, canary, strlen(canary)));
    free(cmd);
}

Test(no_keys, a_plain_fork_of_the_broker_would_hold_the_key)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    scan s = scan_memory(pid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert_gt(s.hits, 0, "the scan missed the key in a fork of this process (%zu bytes read)",
                 s.scanned);
}

static const char zygote_cmdline[] = "verifetch-worker\0--zygote\0" "1\0shared";
static const char worker_cmdline[] = "verifetch-worker";

Test(no_keys, the_zygote_and_its_live_worker_hold_no_key)
{
    char err[256];
    vf_zygote_options o = { .worker_path = cfg.worker_path, .ca_pem = cfg.ca_pem,
                            .ca_pem_len = cfg.ca_pem_len, .pool = 1 };
    cr_assert_eq(vf_zygote_start(&o, err, sizeof err), 0, "%s", err);
    vf_zygote_status st;
    vf_zygote_get_status(&st);
    cr_assert_gt(st.ca_certs, 100, "the public CA bundle did reach the zygote");
    assert_clean(st.pid, "the zygote", zygote_cmdline, sizeof zygote_cmdline);

    test_origin org;
    memset(&org, 0, sizeof org);
    size_t rlen;
    const char *body = "<p>canary page</p>";
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html", body, strlen(body), &rlen);
    org.response = resp;
    org.response_len = rlen;
    origin_start(&org);
    char url[128];
    snprintf(url, sizeof url, "http://origin.test:%u/", org.port);
    vf_job job = basic_job(url);
    job.test_hook = "hang_after_result";
    vf_zygote_worker w;
    cr_assert_eq(vf_zygote_take(vf_now_ms() + 10000, -1, &w, err, sizeof err), VF_ZYGOTE_SPAWNED,
                 "%s", err);
    void *frame;
    size_t flen;
    cr_assert_eq(vf_job_encode(&job, &frame, &flen), VF_IPC_OK);
    int s = origin_connect(&org);
    cr_assert_eq(vf_ipc_send_frame(w.ipc, frame, flen, s), VF_IPC_OK);
    close(s);
    free(frame);
    void *payload;
    size_t plen;
    cr_assert_eq(vf_ipc_recv_frame(w.ipc, 1 << 21, vf_now_ms() + 10000, &payload, &plen, NULL), VF_IPC_OK);
    free(payload);
    origin_stop(&org);
    /* Answered and blocked: everything it ever touched is still mapped. A fork
     * keeps the zygote's argv, so that is its command line too. */
    assert_clean(w.pid, "a zygote worker", zygote_cmdline, sizeof zygote_cmdline);
    vf_zygote_release(&w);
    free(resp);
}

/* ---- the exec path, through the broker's own vf_worker_run --------------- */

typedef struct {
    test_origin *origin;
    int rc;
} hop_arg;

static void *exec_hop(void *arg)
{
    hop_arg *h = arg;
    char url[128];
    snprintf(url, sizeof url, "http://origin.test:%u/", h->origin->port);
    vf_job job = basic_job(url);
    job.timeout_ms = 3000;
    vf_worker_spec spec = { .path = cfg.worker_path, .test_hook = "hang_after_result" };
    vf_result res;
    char detail[256];
    int s = origin_connect(h->origin);
    h->rc = vf_worker_run(&spec, &job, s, vf_now_ms() + 3000, &res, detail, sizeof detail);
    close(s);
    if (h->rc == 0)
        vf_result_free(&res);
    return NULL;
}

/* The exec'd worker among this process's children, once it has exec'd. */
static pid_t find_child_worker(void)
{
    for (int tries = 0; tries < 300; tries++) {
        pid_t kids[64];
        size_t n = pi_children(getpid(), kids, 64);
        for (size_t i = 0; i < n && i < 64; i++)
            if (pi_is_worker(kids[i]))
                return kids[i];
        usleep(10000);
    }
    return -1;
}

Test(no_keys, an_exec_d_worker_holds_no_key)
{
    test_origin org;
    memset(&org, 0, sizeof org);
    size_t rlen;
    const char *body = "<p>canary page</p>";
    char *resp = http_response("HTTP/1.1 200 OK", "Content-Type: text/html", body, strlen(body), &rlen);
    org.response = resp;
    org.response_len = rlen;
    origin_start(&org);
    hop_arg h = { .origin = &org };
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, exec_hop, &h), 0);
    origin_stop(&org); /* the worker has fetched */
    pid_t pid = find_child_worker();
    cr_assert_gt(pid, 0, "no exec'd worker under this process");
    usleep(200000);   /* let it answer and block */
    assert_clean(pid, "an exec'd worker", worker_cmdline, sizeof worker_cmdline);
    pthread_join(t, NULL);
    cr_assert_eq(h.rc, 0, "the hop itself failed");
    free(resp);
}
