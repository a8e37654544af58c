#include "serving_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_common.h"

void sv_config_body(char *conf, unsigned slots, unsigned timeout_ms, const char *worker_extra,
                    const char *tenant_extra)
{
    char worker[PATH_MAX];
    hx_build_path("worker/verifetch-worker", worker, sizeof worker);
    snprintf(conf, SV_CONF_MAX,
             "worker = { path = \"%s\"; ca_file = \"%s\"; max_concurrent = %u; %s };\n"
             "tenants = ( { name = \"serving\"; attempt_ceiling = 1; timeout_ms = %u;\n"
             "  egress = { allow = [ \"127.0.0.1/32\" ]; any_port = true; }; %s } );\n",
             worker, hx_default_ca()->ca_pem, slots, worker_extra, timeout_ms, tenant_extra);
}

void sv_start(hx_origin *origin, hx_broker *broker, unsigned slots, unsigned timeout_ms)
{
    static char conf[SV_CONF_MAX];
    hx_origin_start(origin, NULL, NULL);
    sv_config_body(conf, slots, timeout_ms, "", "");
    hh_broker_start(broker, conf);
}

struct sockaddr_un sv_broker_addr(const hx_broker *broker)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t len = strlen(broker->socket_path);
    cr_assert_lt(len, sizeof sa.sun_path);
    memcpy(sa.sun_path, broker->socket_path, len + 1);
    return sa;
}

int sv_connect(const hx_broker *broker)
{
    struct sockaddr_un sa = sv_broker_addr(broker);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "cannot connect to the broker");
    return fd;
}

size_t sv_count_in_log(const hx_broker *broker, const char *needle)
{
    char *log = hx_read_file(broker->stderr_path, NULL);
    size_t n = 0;
    for (const char *p = log; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    free(log);
    return n;
}

size_t sv_await_in_log(const hx_broker *broker, const char *needle, double wait_ms)
{
    double until = hx_now_ms() + wait_ms;
    size_t n;
    while ((n = sv_count_in_log(broker, needle)) == 0 && hx_now_ms() < until)
        usleep(20 * 1000);
    return n;
}

int sv_send_lookup(const hx_broker *broker, const char *url)
{
    char body[512], req[1024];
    int blen = snprintf(body, sizeof body, "{\"url\": \"%s\"}", url);
    int rlen = snprintf(req, sizeof req,
                        "POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Content-Length: %d\r\n\r\n%s", blen, body);
    int fd = sv_connect(broker);
    cr_assert_eq(send(fd, req, (size_t)rlen, MSG_NOSIGNAL), rlen);
    return fd;
}
