/* Pins curl issue #10626: libcurl < 8.0.0 calls connect() on a socket the
 * application declared already connected (CURL_SOCKOPT_ALREADY_CONNECTED).
 * The worker's filter answers connect with ERRNO(0) because of it. When this
 * test starts failing on a newer libcurl, the workaround can go. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "curl_given_socket.h"
#include "harness.h"

/* In a child: connect() answers connect_errno via seccomp, then curl fetches
 * over a socket we connected. Exit 0 when the fetch worked, 1 when not. */
static bool fetch_with_connect_returning(int connect_errno)
{
    test_origin o;
    memset(&o, 0, sizeof o);
    const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    o.response = resp;
    o.response_len = strlen(resp);
    origin_start(&o);
    int sock = origin_connect(&o);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", o.port);

    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(connect_errno), SCMP_SYS(connect), 0) ||
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || seccomp_load(ctx))
            _exit(2);
        _exit(given_socket_fetch(&sock, url) == CURLE_OK ? 0 : 1);
    }
    close(sock);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    origin_stop(&o);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 2, "could not install the filter");
    return WEXITSTATUS(st) == 0;
}

Test(curl_connect_pin, connect_on_already_connected_socket)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    unsigned ver = curl_version_info(CURLVERSION_NOW)->version_num;
    bool fixed = ver >= 0x080000;
    bool with_eacces = fetch_with_connect_returning(EACCES);
    bool with_zero = fetch_with_connect_returning(0);
    cr_assert(with_zero, "fetch failed even with connect -> 0");
    if (fixed)
        cr_assert(with_eacces, "libcurl %s >= 8.0.0 should not call connect()",
                  curl_version_info(CURLVERSION_NOW)->version);
    else
        cr_assert_not(with_eacces,
                      "libcurl %s no longer calls connect() on an already-connected "
                      "socket: the ERRNO(0) workaround in worker/seccomp_filter.c can go",
                      curl_version_info(CURLVERSION_NOW)->version);
}
