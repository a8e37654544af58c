/* The worker's lean libcurl is built with --disable-socketpair
 * (packaging/lean_curl.sh): the multi handle behind curl_easy_perform then
 * opens no wakeup socketpair, which costs every worker a socketpair, four
 * fcntl and two closes for nothing. Here a fetch must succeed in a child in
 * which socketpair() kills the process. Built only with -Dworker_curl. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "curl_given_socket.h"
#include "harness.h"

Test(curl_no_wakeup_pair, easy_fetch_makes_no_socketpair)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
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
        /* connect() as in the worker's filter (curl issue #10626). */
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(socketpair), 0) ||
            seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(connect), 0) ||
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || seccomp_load(ctx))
            _exit(2);
        _exit(given_socket_fetch(&sock, url) == CURLE_OK ? 0 : 1);
    }
    close(sock);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    origin_stop(&o);
    cr_assert(!(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS),
              "libcurl called socketpair(): the lean build lost --disable-socketpair");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fetch failed (status %#x)", st);
}
