#include "broker/api/capacity.h"

#include <stdio.h>
#include <sys/resource.h>

#include "broker/api/admission.h"

unsigned vf_capacity_admitted(unsigned slots)
{
    return slots + VF_ADMISSION_TENANT_QUEUES * vf_admission_queue_for(slots);
}

static unsigned long fds_needed(unsigned slots, unsigned connections, unsigned listeners)
{
    return VF_CAPACITY_RESERVED_FDS + (unsigned long)slots * VF_CAPACITY_FDS_PER_SLOT +
           (unsigned long)vf_capacity_admitted(slots) * VF_CAPACITY_FDS_PER_QUEUED +
           (unsigned long)connections * listeners;
}

static unsigned long raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 1048576 ? 1048576 : rl.rlim_max;
        if (want > rl.rlim_cur) {
            struct rlimit up = { .rlim_cur = want, .rlim_max = rl.rlim_max };
            if (setrlimit(RLIMIT_NOFILE, &up) == 0)
                rl.rlim_cur = want;
        }
    }
    return rl.rlim_cur == RLIM_INFINITY ? 1048576 : (unsigned long)rl.rlim_cur;
}

void vf_capacity_plan(unsigned want_slots, unsigned listeners, vf_capacity *out)
{
    unsigned long nofile = raise_nofile();
    unsigned slots = want_slots ? want_slots : 1;
    unsigned conns = vf_capacity_admitted(slots) + VF_CAPACITY_HEADROOM;
    if (fds_needed(slots, conns, listeners) > nofile) {
        unsigned long base = fds_needed(slots, 0, listeners);
        conns = base < nofile ? (unsigned)((nofile - base) / listeners) : 0;
        while (conns < VF_CAPACITY_MIN_CONNECTIONS && slots > 1) {
            slots--;
            base = fds_needed(slots, 0, listeners);
            conns = base < nofile ? (unsigned)((nofile - base) / listeners) : 0;
        }
        if (conns < VF_CAPACITY_MIN_CONNECTIONS)
            conns = VF_CAPACITY_MIN_CONNECTIONS;
        fprintf(stderr,
                "verifetchd: %lu file descriptors allow %u workers and %u connections per listener "
                "(worker.max_concurrent = %u asked for more)\n",
                nofile, slots, conns, want_slots);
    }
    out->slots = slots;
    out->max_connections = conns;
    out->per_peer = conns - conns / 8 ? conns - conns / 8 : 1;
    out->nofile = nofile;
}
