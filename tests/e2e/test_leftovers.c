/* E2E, run last and alone (meson: is_parallel false, lowest priority): after
 * the suite no worker, broker or origin started from this build tree may
 * still be alive anywhere on the machine. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

/* Describes pid if it runs a binary from build_root, or is an origin.py started
 * by this build's harness (which tags it with --owner <build_root>/). */
static bool is_ours(const char *pid, const char *build_root, char *what, size_t len)
{
    char path[320], exe[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%s/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        size_t rl = strlen(build_root);
        if (strncmp(exe, build_root, rl) == 0 && exe[rl] == '/' &&
            (strstr(exe + rl, "/worker/verifetch-worker") || strstr(exe + rl, "/broker/verifetchd"))) {
            snprintf(what, len, "%s", exe);
            return true;
        }
    }
    snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
    size_t clen = 0;
    char *cmd = hx_read_file(path, &clen);
    char owner[PATH_MAX];
    snprintf(owner, sizeof owner, "%s/", build_root);
    bool script = false, mine = false;
    for (size_t i = 0; cmd && i < clen; i += strlen(cmd + i) + 1) {
        script = script || strstr(cmd + i, "tests/origin/origin.py") != NULL;
        mine = mine || strcmp(cmd + i, owner) == 0;
    }
    free(cmd);
    if (script && mine)
        snprintf(what, len, "origin.py");
    return script && mine;
}

static size_t scan(const char *build_root, char *report, size_t len)
{
    size_t found = 0, used = 0;
    report[0] = '\0';
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char what[PATH_MAX];
        if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == getpid())
            continue;
        if (is_ours(e->d_name, build_root, what, sizeof what)) {
            found++;
            int w = used < len ? snprintf(report + used, len - used, " %s:%s", e->d_name, what) : 0;
            used += w > 0 ? (size_t)w : 0;
        }
    }
    closedir(d);
    return found;
}

Test(leftovers, nothing_from_this_build_is_still_running)
{
    const char *root = getenv("VERIFETCH_BUILD_ROOT");
    cr_assert_not_null(root, "VERIFETCH_BUILD_ROOT is not set (run through meson test)");
    char report[2048];
    size_t n = 0;
    double deadline = hx_now_ms() + 2000;   /* let just-finished tests' children die */
    do {
        n = scan(root, report, sizeof report);
        if (n == 0)
            return;
        usleep(50000);
    } while (hx_now_ms() < deadline);
    cr_assert_eq(n, 0, "processes left behind after the e2e suite:%s", report);
}
