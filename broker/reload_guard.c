#include "broker/reload_guard.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void note(const char *name, const char *was, const char *asked, char *changed, size_t len, int *n)
{
    fprintf(stderr, "verifetchd: reload: %s changed to %s but only takes effect at start-up; "
                    "keeping %s until a restart\n", name, asked ? asked : "unset", was ? was : "unset");
    size_t used = strlen(changed);
    snprintf(changed + used, len - used, "%s%s", used ? ", " : "", name);
    (*n)++;
}

/* Replace *slot with a copy of keep; false when out of memory. */
static bool keep_text(char **slot, const char *keep)
{
    char *copy = keep ? strdup(keep) : NULL;
    if (keep && !copy)
        return false;
    free(*slot);
    *slot = copy;
    return true;
}

int vf_reload_keep_restart_settings(const vf_config *running, vf_config *next, char *changed, size_t len)
{
    int n = 0;
    changed[0] = '\0';
    if (!same_text(running->socket_path, next->socket_path)) {
        note("listen.socket", running->socket_path, next->socket_path, changed, len, &n);
        if (!keep_text(&next->socket_path, running->socket_path))
            return -1;
    }
    if (running->socket_mode != next->socket_mode) {
        char was[16], asked[16];
        snprintf(was, sizeof was, "0%o", running->socket_mode);
        snprintf(asked, sizeof asked, "0%o", next->socket_mode);
        note("listen.mode", was, asked, changed, len, &n);
        next->socket_mode = running->socket_mode;
    }
    if (!same_text(running->tcp_listen, next->tcp_listen)) {
        note("listen.tcp", running->tcp_listen, next->tcp_listen, changed, len, &n);
        if (!keep_text(&next->tcp_listen, running->tcp_listen))
            return -1;
        next->tcp_addr = running->tcp_addr;
        next->tcp_addr_len = running->tcp_addr_len;
    }
    if (!same_text(running->worker_path, next->worker_path)) {
        note("worker.path", running->worker_path, next->worker_path, changed, len, &n);
        if (!keep_text(&next->worker_path, running->worker_path))
            return -1;
    }
    if (running->zygote != next->zygote) {
        note("worker.zygote", running->zygote ? "true" : "false", next->zygote ? "true" : "false", changed, len,
             &n);
        next->zygote = running->zygote;
    }
    if (running->subordinate_uid != next->subordinate_uid) {
        note("worker.subordinate_uid", running->subordinate_uid ? "auto" : "off",
             next->subordinate_uid ? "auto" : "off", changed, len, &n);
        next->subordinate_uid = running->subordinate_uid;
    }
    bool same_ca = running->ca_pem_len == next->ca_pem_len &&
                   (!running->ca_pem_len || memcmp(running->ca_pem, next->ca_pem, running->ca_pem_len) == 0);
    if (!same_ca) {   /* the zygote parsed the CA once */
        note("worker.ca_file", running->ca_file, next->ca_file, changed, len, &n);
        uint8_t *pem = running->ca_pem_len ? malloc(running->ca_pem_len) : NULL;
        if (running->ca_pem_len && !pem)
            return -1;
        if (pem)
            memcpy(pem, running->ca_pem, running->ca_pem_len);
        if (!keep_text(&next->ca_file, running->ca_file)) {
            free(pem);
            return -1;
        }
        free(next->ca_pem);
        next->ca_pem = pem;
        next->ca_pem_len = running->ca_pem_len;
    }
    return n;
}
