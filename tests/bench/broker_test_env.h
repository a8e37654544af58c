/* A real verifetchd (zygote, confined workers) and the loopback benchmark
 * origin, for the tests that measure the broker's memory. VERIFETCH_BUILD_ROOT
 * names the build whose broker and worker run, so a test can be pointed at an
 * older build to see it fail. */
#ifndef VERIFETCH_BROKER_TEST_ENV_H
#define VERIFETCH_BROKER_TEST_ENV_H

#include "bench.h"

/* Starts both in a new directory made from tmp_template (…XXXXXX); asserts
 * on failure. Stop with bench_env_teardown. */
void broker_test_env_start(bench_env *env, const char *tmp_template);

#endif
