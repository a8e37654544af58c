/* verifetch-worker: one fetch, confined. Started by the broker with an empty
 * environment and the IPC socket on fd 3; receives one job plus a connected
 * socket, confines itself, fetches, extracts, answers with one result frame.
 * With "--zygote POOL MODE" it is instead the broker's zygote (worker/zygote.h),
 * which forks pre-initialised workers on request. */
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker/sandbox/sanitizer.h"
#include "worker_job.h"
#include "worker/sandbox/zygote.h"

#ifdef VF_UNDER_ASAN
/* LeakSanitizer's exit-time scan clones and ptraces, which the filter kills;
 * leaks are checked in the unit tests, which run the same code unconfined.
 * ASan's SIGSEGV handler would symbolize (open files) and die by SIGSYS: let a
 * crash stay a plain SIGSEGV, as in production. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0:handle_segv=0:handle_sigbus=0";
}
#endif

int main(int argc, char **argv)
{
    /* A dead peer must give EPIPE, not kill us; a file-backed stderr under
     * RLIMIT_FSIZE 0 must give EFBIG, not SIGXFSZ. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        /* For people; the broker always runs a worker with no arguments. */
        printf("verifetch-worker %s\n", VERIFETCH_VERSION);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "--zygote") == 0)
        return vf_zygote_main(argv[2], argv[3]);
    vf_worker_ctx ctx = { .from_zygote = false };
    /* _exit: the answer is out; library clean-up at exit would only touch
     * (and, in a zygote's child, copy) memory that is about to go anyway. */
    _exit(vf_worker_serve(&ctx));
}
