/* The zygote: the worker executable in "--zygote POOL MODE" mode, exec'd fresh
 * by the broker (so it never held broker memory, keys included). It does the
 * expensive, page-independent set-up once -- libraries initialised, CA bundle
 * parsed, seccomp program compiled, root dropped, namespaces entered or probed
 * (MODE "shared" or "private", see namespaces.h) -- then forks workers, each
 * pid 1 of its own pid namespace, keeping POOL of them forked and waiting.
 * Protocol: worker/zygote_proto.h. */
#ifndef VERIFETCH_WORKER_ZYGOTE_H
#define VERIFETCH_WORKER_ZYGOTE_H

/* Returns the process exit code (0 when the broker closed the control socket). */
int vf_zygote_main(const char *pool_arg, const char *ns_mode);

#endif
