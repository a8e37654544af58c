/* A worker maps only the libraries it uses (built with -Dworker_curl, which
 * packaging/bootstrap.sh sets): the zygote every worker is forked from is
 * started the way the broker starts it, and its /proc/<pid>/maps must hold
 * none of the libraries Debian's shared libcurl drags in (LDAP, RTMP, SSH,
 * GnuTLS, Kerberos, SASL, HTTP/2, PSL...; libidn2 stays, for the worker's own
 * punycode conversion). This test process links the
 * system libcurl through the broker code, so scanning its own maps shows the
 * scan finds them when they are there. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/spawn/zygote_client.h"
#include "worker/sandbox/sanitizer.h"
#include "harness.h"
#include "zygote_pool1.h"
#include "proc_inspect.h"

/* What a worker never needs; the lean libcurl leaves every one out. */
static const char *const unwanted[] = { "libldap", "liblber", "librtmp", "libssh2", "libgnutls", "libkrb5",
                                        "libgssapi_krb5", "libk5crypto", "libsasl2", "libnghttp2", "libpsl",
                                        "libnettle", "libhogweed", "libgmp", "libp11-kit" };
#define N_UNWANTED (sizeof unwanted / sizeof unwanted[0])
/* The lean worker maps 20 shared objects (libc, OpenSSL, libxml2, ICU, libidn2...);
 * built with -Dworker_static (bootstrap sets it too), 5: glibc's ld.so, libc and
 * libm, libidn2 and its libunistring. */
#ifdef VF_WORKER_STATIC
#define MAX_SHARED_OBJECTS 5
#else
#define MAX_SHARED_OBJECTS 22
#endif
/* What a static worker carries inside its own binary. */
static const char *const linked_in[] = { "libssl", "libcrypto", "libxml2", "libicu", "libstdc++", "libseccomp",
                                         "libmsgpackc", "libjansson", "libz.", "libzstd", "libbrotli", "liblzma" };
#define N_LINKED_IN (sizeof linked_in / sizeof linked_in[0])

typedef struct {
    unsigned objects;            /* distinct mapped *.so* files */
    unsigned unwanted;           /* of them, on the list above */
    char first_unwanted[128];
    unsigned linked_in;          /* of them, on the static worker's list */
    char first_linked_in[128];
} lib_scan;

/* The ASan/UBSan build's runtimes, and what they load themselves (libubsan
 * needs the shared libstdc++ and libgcc_s): not the worker's. */
static bool is_sanitizer_runtime(const char *base)
{
    if (strncmp(base, "libasan", 7) == 0 || strncmp(base, "libubsan", 8) == 0)
        return true;
#ifdef VF_UNDER_ASAN
    if (strncmp(base, "libstdc++", 9) == 0 || strncmp(base, "libgcc_s", 8) == 0)
        return true;
#endif
    return false;
}

/* Counts base once per entry of list it starts with; keeps the first such name. */
static void tally(const char *base, const char *const *list, size_t n, unsigned *count, char first[128])
{
    for (size_t i = 0; i < n; i++) {
        if (strncmp(base, list[i], strlen(list[i])) == 0 && !(*count)++)
            snprintf(first, 128, "%s", base);
    }
}

static lib_scan scan_maps(pid_t pid)
{
    lib_scan s = { 0 };
    size_t len;
    char *maps = pi_read(pid, "maps", &len);
    cr_assert_not_null(maps, "read /proc/%d/maps", (int)pid);
    char seen[4096] = "";
    for (char *line = strtok(maps, "\n"); line; line = strtok(NULL, "\n")) {
        const char *path = strchr(line, '/');
        if (!path || !strstr(path, ".so"))
            continue;
        const char *base = strrchr(path, '/') + 1;
        if (is_sanitizer_runtime(base))
            continue;
        char key[160];
        snprintf(key, sizeof key, "|%s|", base);
        if (strstr(seen, key))
            continue;
        if (strlen(seen) + strlen(key) < sizeof seen)
            strcat(seen, key);
        s.objects++;
        tally(base, unwanted, N_UNWANTED, &s.unwanted, s.first_unwanted);
        tally(base, linked_in, N_LINKED_IN, &s.linked_in, s.first_linked_in);
    }
    free(maps);
    return s;
}

Test(worker_libs, the_scan_sees_the_system_libcurl_libraries_in_this_process)
{
    lib_scan s = scan_maps(getpid());
    cr_assert_gt(s.unwanted, 3, "this process links the system libcurl, yet only %u of its libraries "
                 "were seen among %u objects", s.unwanted, s.objects);
}

Test(worker_libs, the_zygote_maps_no_library_a_worker_never_uses, .timeout = 60)
{
    pid_t zygote = zygote_start_pool1();
    lib_scan s = scan_maps(zygote);
    vf_zygote_stop();
    cr_log_info("the zygote maps %u shared objects", s.objects);
    cr_assert_eq(s.unwanted, 0, "the zygote maps %u unwanted libraries, e.g. %s", s.unwanted, s.first_unwanted);
    cr_assert_leq(s.objects, MAX_SHARED_OBJECTS, "the zygote maps %u shared objects", s.objects);
}

#ifdef VF_WORKER_STATIC
Test(worker_libs, the_scan_sees_the_shared_openssl_in_this_process)
{
    lib_scan s = scan_maps(getpid());
    cr_assert_geq(s.linked_in, 2, "this process links libssl and libcrypto shared, yet the scan saw %u of them",
                  s.linked_in);
}

Test(worker_libs, a_static_worker_maps_none_of_the_libraries_linked_into_it, .timeout = 60)
{
    pid_t zygote = zygote_start_pool1();
    lib_scan s = scan_maps(zygote);
    vf_zygote_stop();
    cr_assert_eq(s.linked_in, 0, "the zygote maps %u shared copies of what is linked into it, e.g. %s", s.linked_in,
                 s.first_linked_in);
}
#endif
