/* verifetch benchmark: shared types. One run measures four ways of fetching
 * the same loopback page (in-process libcurl; the floor: in-process fetch plus
 * the same extraction and post-processing verifetch does; one curl process per
 * fetch; verifetch lookups) in interleaved rounds, and the broker's and
 * worker's memory. */
#ifndef VERIFETCH_BENCH_H
#define VERIFETCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define BENCH_PATH_MAX 4096
/* The tenant's max_body_bytes, and the max_body of the standalone worker job
 * (room for the 8 MiB page). */
#define BENCH_MAX_BODY_BYTES (16u << 20)

/* What one fetch is aimed at, for every mode. */
typedef struct {
    char url[512];               /* http(s)://127.0.0.1:port/10k ... */
    const char *ca_file;         /* throwaway CA for https, NULL for http */
    size_t body_bytes;           /* exact size the origin serves */
    size_t min_text_chars;       /* verifetch: extracted text must be at least this long */
    const char *socket_path;     /* verifetch broker's unix socket */
    const char *curl_path;       /* /usr/bin/curl */
} bench_target;

/* One way of fetching. thread_init/thread_done may be NULL; state is per thread. */
typedef struct {
    const char *name;            /* "inproc", "curl", "verifetch" */
    void *(*thread_init)(const bench_target *t);
    int (*fetch)(const bench_target *t, void *state, char *err, size_t errlen);
    void (*thread_done)(void *state);
} bench_fetcher;

extern const bench_fetcher bench_inproc;      /* (a) libcurl in process, fresh easy handle per fetch */
extern const bench_fetcher bench_floor;       /* (b) (a) + the worker's extraction + the broker's judging/JSON */
extern const bench_fetcher bench_curl_proc;   /* (c) one curl process per fetch */
extern const bench_fetcher bench_verifetch;   /* (d) POST /v1/lookup over the broker's unix socket */

/* The floor's shared redactor and classifier (bench_floor.c). */
int bench_floor_setup(void);
void bench_floor_teardown(void);

typedef struct {
    unsigned concurrency;
    unsigned warmup;             /* untimed fetches before the measured ones */
    unsigned requests;           /* measured fetches asked for */
    double time_cap_s;           /* stop issuing new fetches after this long */
} bench_plan;

typedef struct {
    unsigned requested;
    unsigned done;               /* measured fetches that succeeded */
    unsigned failed;
    double wall_s;
    double median_ms, p99_ms, mean_ms, min_ms, max_ms;
    double per_s;                /* successful fetches per wall-clock second */
    char first_error[256];
} bench_stats;

/* Run plan.requests fetches on plan.concurrency threads. 0 when every fetch
 * succeeded; failures are counted and the first one described. */
int bench_run_cell(const bench_fetcher *f, const bench_target *t, const bench_plan *plan,
                   bench_stats *out);

/* ---- processes and /proc ---------------------------------------------- */

/* snprintf that reports truncation (-1) instead of hiding it. */
__attribute__((format(printf, 3, 4))) int bench_fmt(char *buf, size_t len, const char *fmt, ...);
/* bench_fmt for paths: a truncated path is a fatal setup error. */
__attribute__((format(printf, 2, 3))) void bench_path(char *buf, const char *fmt, ...);

double bench_now_ms(void);
void bench_sleep_ms(unsigned ms);

/* fork+exec with stdin=/dev/null, stdout=out_fd, stderr=err_fd (-1: /dev/null);
 * the child dies with us (PR_SET_PDEATHSIG). */
pid_t bench_spawn(char *const argv[], int out_fd, int err_fd);
/* Run to completion (bounded); returns the wait status or -1 on timeout (child killed). */
int bench_run(char *const argv[], const char *log_path, unsigned timeout_ms);
/* Read one '\n'-terminated line from fd within timeout_ms. */
int bench_read_line(int fd, char *buf, size_t len, unsigned timeout_ms);
/* SIGTERM, wait up to timeout_ms, then SIGKILL; always reaps. */
void bench_stop(pid_t pid, unsigned timeout_ms);

/* /proc figures (VmHWM, parents, the zygote test) come from
 * tests/support/proc_inspect.h. */
/* Reset VmHWM to the current RSS (echo 5 > clear_refs). 0 on success. */
int bench_reset_hwm(pid_t pid);
/* The broker's zygote (a child running "verifetch-worker --zygote ..."), or 0. */
pid_t bench_find_zygote(pid_t broker);

/* ---- CPU accounting ------------------------------------------------------ */

/* CPU time (user+system, ms) of every process taking part, so a cell's cost
 * can be split by who spent it. */
typedef struct {
    double client_ms;            /* this process: libcurl fetches or the lookup client */
    double curl_ms;              /* reaped children of this process: the curl processes */
    double broker_ms;            /* verifetchd, all its threads */
    double workers_ms;           /* reaped by the broker or by its children (cutime+cstime): the
                                    workers, and zygotes that have been retired */
    double zygote_ms;            /* the broker's children themselves: its zygote (and a retiring
                                    one), or fresh-spawned workers not yet reaped */
    double origin_ms;
    double kthreads_ms;          /* kernel threads, machine-wide: e.g. the deferred teardown of a
                                    worker's network namespace runs in a kworker, not in the worker */
} bench_cpu;

struct bench_env;
void bench_cpu_snapshot(const struct bench_env *e, bench_cpu *out);
/* CPU time of the calling thread, ms. */
double bench_thread_cpu_ms(void);
/* ms of this process's CPU spent checking answers, not fetching them (the
 * verifetch client parses one answer per thread in full): snapshots leave it
 * out of client_ms. Any thread. */
void bench_cpu_not_client(double ms);
/* All of it so far, ms. */
double bench_cpu_not_client_total_ms(void);
/* CPU of kernel threads since the first call, ms; monotonic. Main thread only. */
double bench_kthreads_ms(void);
/* Busy CPU time of the whole machine (all CPUs, /proc/stat), ms. */
double bench_machine_busy_ms(void);
/* Sum of every field of a snapshot. */
double bench_cpu_total(const bench_cpu *c);
/* (after - before) / fetches, per field. */
void bench_cpu_per_fetch(const bench_cpu *before, const bench_cpu *after, unsigned fetches, bench_cpu *out);

/* ---- the environment under test ---------------------------------------- */

typedef struct bench_env {
    char tmpdir[BENCH_PATH_MAX];
    char ca_pem[BENCH_PATH_MAX];         /* the throwaway CA */
    char ca_bundle[BENCH_PATH_MAX];      /* system bundle + throwaway CA; "" if no system bundle */
    char cert_pem[BENCH_PATH_MAX];
    char key_pem[BENCH_PATH_MAX];
    char config[BENCH_PATH_MAX];
    char socket_path[BENCH_PATH_MAX];
    char broker_log[BENCH_PATH_MAX];
    unsigned short plain_port, tls_port;
    pid_t origin_pid, broker_pid;
} bench_env;

int bench_env_make_certs(bench_env *e);
int bench_env_start_origin(bench_env *e, const char *origin_bin);
/* ca_file: what the broker gives workers (worker.ca_file). */
int bench_env_start_broker(bench_env *e, const char *broker_bin, const char *worker_bin, const char *ca_file);
void bench_env_teardown(bench_env *e, bool keep_files);

/* ---- worker memory ------------------------------------------------------ */

typedef struct {
    long maxrss_kib;             /* wait4() ru_maxrss of the worker */
    long hwm_sample_kib;         /* VmHWM read while it was still sending its result, -1 if missed */
    long anon_kib, file_kib;     /* RssAnon / RssFile at that moment: heap vs mapped libraries */
    long launcher_kib;           /* the launcher's own VmHWM: a bound on what fork() could leak into maxrss */
    long wall_ms;                /* fork to reaped, ms (launcher clock: whole ms) */
    long cpu_us;                 /* the worker's user+system CPU (wait4), us: load-independent */
    long text_len;
    int http_status;
    bool ok;
    char detail[256];
} bench_worker_mem;

/* Run the standalone launcher (tests/bench/bench_worker_rss.c) once; ca_file for https. */
int bench_worker_mem_run(const char *launcher_bin, const char *worker_bin, const bench_env *e,
                         const char *ca_file, bool tls, const char *path, size_t max_body,
                         bench_worker_mem *out);

/* In-situ: sample /proc for workers while lookups run: children of the broker
 * (exec'd workers) and of its zygote (forked workers, named "vf-zygote" until
 * they rename themselves). Returns the largest VmHWM seen (KiB) and how many
 * distinct workers were seen. */
typedef struct bench_sampler bench_sampler;
bench_sampler *bench_sampler_start(pid_t broker_pid);
void bench_sampler_stop(bench_sampler *s, long *max_hwm_kib, unsigned *workers_seen);

/* ---- the report --------------------------------------------------------- */

enum { BENCH_INPROC = 0, BENCH_FLOOR = 1, BENCH_CURL = 2, BENCH_VERIFETCH = 3, BENCH_MODES = 4 };
#define BENCH_MAX_ROUNDS 9

/* Spread of a figure over the rounds. */
typedef struct {
    double min, max;
} bench_range;

/* One (page, scheme, concurrency) group: the modes side by side, each run
 * once per round (modes in rotated order), summarised as medians of the
 * per-round figures. */
typedef struct {
    const char *page;            /* "10k", "1m" */
    const char *scheme;          /* "http", "https" */
    unsigned concurrency;
    bench_plan plan;             /* per round */
    unsigned rounds;
    bench_stats round[BENCH_MAX_ROUNDS][BENCH_MODES];
    bench_cpu round_cpu[BENCH_MAX_ROUNDS][BENCH_MODES];
    /* Medians over rounds: median_ms, p99_ms, per_s (and done/failed summed). */
    bench_stats mode[BENCH_MODES];
    bench_range median_range[BENCH_MODES], per_s_range[BENCH_MODES];
    bench_cpu cpu[BENCH_MODES];  /* per fetch, warm-up included; each field the median over rounds */
    double cpu_total[BENCH_MODES];   /* median over rounds of the whole CPU per fetch */
    bench_range cpu_total_range[BENCH_MODES];
} bench_row;

/* Fill mode[], the ranges and cpu[] from the rounds. */
void bench_row_summarise(bench_row *r);

typedef struct {
    long broker_start_rss_kib;   /* VmRSS right after start */
    long broker_hwm_grid_kib;    /* VmHWM after the whole grid */
    bool hwm_reset_ok;           /* clear_refs worked, so the c64 figures are per phase */
    long broker_hwm_c64_kib[2];  /* [0] 10k, [1] 1m: VmHWM during 64 concurrent lookups */
    bench_stats c64[2];
    long broker_hwm_c16_8m_kib;  /* VmHWM during 16 concurrent 8 MiB lookups */
    bench_stats c16_8m;
    long broker_idle_rss_kib;    /* VmRSS after all that load, once idle */
    long broker_start_threads;   /* thread count right after start: "idle" is back to it */
    double broker_idle_wait_ms;  /* how long the broker took to get there (60 s at most) */
    bench_worker_mem worker[3][2];   /* [page 10k/1m/8m][http/https], max over repetitions */
    unsigned worker_reps;
    /* Worker alone, 10k https, CA given as the throwaway CA [0] or the system bundle [1]. */
    long ca_cost_cpu_us[2], ca_cost_wall_ms[2], ca_cost_maxrss_kib[2], ca_bundle_bytes;   /* medians; max RSS */
    unsigned ca_cost_reps;
    long zygote_rss_kib, zygote_hwm_kib;   /* -1: the broker runs no zygote */
    long insitu_hwm_kib[2];      /* [http/https] 1m lookups through the broker, sampled */
    unsigned insitu_workers[2];
    unsigned insitu_lookups;
} bench_memory_report;

/* Wall-clock medians of a few batches, taken before the run (bench_kernel_cost.c). */
typedef struct {
    double syscall_us;        /* getppid() */
    double page_fault_us;     /* first write to a fresh anonymous page */
    double fork_exit_wait_ms; /* of the bench process itself */
    double inherited_read_us; /* a child's first read of a page its parent had filled */
} bench_kernel_cost;
void bench_kernel_cost_measure(bench_kernel_cost *k);

typedef struct {
    const char *body_type;       /* "text/html" or "text/plain" */
    const char *ca_kind;         /* "throwaway CA" or "system bundle + throwaway CA" */
    double scale;
    double total_s;
    unsigned nproc;
    double load_before, load_after;  /* 1-minute load average, for the record: it decays over minutes */
    double busy_share_before;    /* share of the machine busy in the seconds just before the run */
    double foreign_cpu_s;        /* CPU time the machine spent on processes not in the benchmark */
    double machine_cpu_s;        /* wall time x CPUs: what there was */
    unsigned rounds;
    bench_kernel_cost kernel;
} bench_run_info;

/* A run is comparable when other processes took at most this share of the machine. */
#define BENCH_QUIET_SHARE 0.10
/* ...and at most this share was busy just before it began. (Not the load
 * average: after one run it stays high for minutes, so the next run of an
 * interleaved comparison was always called noisy.) */
#define BENCH_QUIET_BEFORE 0.10
#define BENCH_QUIET_SAMPLE_MS 2000
bool bench_run_quiet(const bench_run_info *info);

/* 1-minute load average from /proc/loadavg, or -1. */
double bench_loadavg(void);

/* The share of all CPUs busy over the next ms (the caller sleeps meanwhile). */
double bench_busy_share(unsigned ms);

void bench_print_report(FILE *out, const bench_run_info *info, const bench_row *rows, size_t n_rows,
                        const bench_memory_report *mem);
/* Every issue-6 target measured and met. */
bool bench_targets_met(const bench_row *rows, size_t n_rows, const bench_memory_report *mem);
int bench_write_json(const char *path, const bench_run_info *info, const bench_row *rows,
                     size_t n_rows, const bench_memory_report *mem);

#endif
