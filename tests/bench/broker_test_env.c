#include "broker_test_env.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void path_in_build(char *out, const char *rel)
{
    const char *root = getenv("VERIFETCH_BUILD_ROOT");
    bench_path(out, "%s/%s", root && *root ? root : "build", rel);
    char *abs = realpath(out, NULL);
    cr_assert_not_null(abs, "%s: not found (VERIFETCH_BUILD_ROOT?)", out);
    bench_path(out, "%s", abs);
    free(abs);
}

void broker_test_env_start(bench_env *env, const char *tmp_template)
{
    char broker[BENCH_PATH_MAX], worker[BENCH_PATH_MAX], origin[BENCH_PATH_MAX];
    path_in_build(broker, "broker/verifetchd");
    path_in_build(worker, "worker/verifetch-worker");
    path_in_build(origin, "tests/bench/verifetch-bench-origin");
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_ALL);
    snprintf(env->tmpdir, sizeof env->tmpdir, "%s", tmp_template);
    cr_assert_not_null(mkdtemp(env->tmpdir));
    cr_assert_eq(bench_env_make_certs(env), 0, "needs the openssl CLI");
    cr_assert_eq(bench_env_start_origin(env, origin), 0);
    cr_assert_eq(bench_env_start_broker(env, broker, worker, env->ca_pem), 0, "see %s", env->broker_log);
}
