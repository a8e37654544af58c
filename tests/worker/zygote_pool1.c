#include "zygote_pool1.h"

#include <criterion/criterion.h>

#include "broker/spawn/zygote_client.h"
#include "harness.h"

pid_t zygote_start_pool1(void)
{
    char err[256];
    vf_zygote_options o = { .worker_path = worker_path("verifetch-worker"), .pool = 1 };
    cr_assert_eq(vf_zygote_start(&o, err, sizeof err), 0, "%s", err);
    vf_zygote_status st;
    vf_zygote_get_status(&st);
    cr_assert_gt(st.pid, 0);
    return st.pid;
}
