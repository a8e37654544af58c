/* Default locations: the client socket and the worker executable. */
#include "policy/config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef VF_LIBEXECDIR
#define VF_LIBEXECDIR "/usr/libexec"
#endif

#define SOCKET_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

char *vf_default_socket_path(void)
{
    char *path = NULL;
    if (geteuid() == 0)
        return strdup("/run/verifetch/verifetch.sock");
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (runtime && runtime[0] == '/' && asprintf(&path, "%s/verifetch.sock", runtime) >= 0) {
        if (strlen(path) <= SOCKET_PATH_MAX)
            return path;
        free(path);
    }
    if (asprintf(&path, "/tmp/verifetch-%u/verifetch.sock", (unsigned)geteuid()) < 0)
        return NULL;
    return path;
}

char *vf_default_worker_path(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        char *candidate = NULL;
        if (slash) {
            *slash = '\0';
            if (asprintf(&candidate, "%s/../worker/verifetch-worker", exe) < 0)
                candidate = NULL;
        }
        struct stat st;
        if (candidate && stat(candidate, &st) == 0 && S_ISREG(st.st_mode) &&
            access(candidate, X_OK) == 0) {
            char *real = realpath(candidate, NULL);
            if (real) {
                free(candidate);
                return real;
            }
            return candidate;
        }
        free(candidate);
    }
    return strdup(VF_LIBEXECDIR "/verifetch/verifetch-worker");
}
