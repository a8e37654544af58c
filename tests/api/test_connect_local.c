/* Issue 14 defect 9: the broker running out of fds is its own fault, not the
 * origin's: the connect reports a local cause (and the lookup then never
 * counts it against the provider's circuit). Real socket, real rlimit. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "broker/lookup/resolve_connect.h"
#include "ipc/ipc_frame.h"

Test(connect_local, fd_exhaustion_is_a_local_cause)
{
    vf_cidr allow[1];
    cr_assert_eq(vf_cidr_parse("127.0.0.1/32", &allow[0]), 0);
    vf_egress_policy p = { .allow = allow, .n_allow = 1, .any_port = true };
    /* No fd left: the lowest free one becomes the limit. */
    int probe = dup(0);
    cr_assert_geq(probe, 0);
    close(probe);
    struct rlimit rl = { .rlim_cur = (rlim_t)probe, .rlim_max = (rlim_t)probe };
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    vf_connection c;
    vf_connect_status st = vf_resolve_connect("127.0.0.1", 9, &p, vf_now_ms() + 1000, &c);
    cr_assert_eq(st, VF_CONNECT_LOCAL, "status %d: %s", st, c.detail);
    cr_assert(strstr(c.detail, "local: too many open files"), "%s", c.detail);
    cr_assert_eq(c.fd, -1);
}
