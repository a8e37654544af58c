#include "broker/local_cause.h"

#include <errno.h>
#include <stdio.h>

bool vf_local_exhaustion(int err)
{
    return err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS || err == EAGAIN;
}

const char *vf_local_cause(int err, bool port_context)
{
    switch (err) {
    case EMFILE:
        return "too many open files (this process)";
    case ENFILE:
        return "too many open files (system-wide)";
    case EAGAIN:
        return port_context ? "no local port left" : "no process left";
    default:
        return "out of memory";
    }
}

char *vf_local_detail(char *out, size_t len, int err, bool port_context, const char *what)
{
    snprintf(out, len, "local: %s in the broker (%s)", vf_local_cause(err, port_context), what);
    return out;
}
