/* How TCP callers get in: the loopback listen.tcp address and each tenant's
 * bearer tokens, which the file holds only as SHA-256 hashes. A token entry
 * is never echoed in an error: a malformed one may be a pasted plaintext token. */
#include "policy/config_internal.h"
#include "policy/hex_digit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TCP_TEXT_MAX   64u
#define TOKEN_TEXT_MAX 128u
#define MAX_TOKENS     64u
#define HASH_PREFIX    "sha256:"
#define HASH_HEX_LEN   (2u * VF_TOKEN_HASH_LEN)

/* SHA-256 of zero bytes: an entry made from an unset shell variable. */
static const uint8_t empty_sha256[VF_TOKEN_HASH_LEN] = {
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
};

/* ---- listen.tcp ---- */

/* Plain decimal 0..65535, no sign or leading zeros. */
static bool parse_port(const char *text, uint16_t *out)
{
    size_t n = strlen(text);
    if (n == 0 || n > 5 || (n > 1 && text[0] == '0'))
        return false;
    unsigned value = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        value = value * 10 + (unsigned)(text[i] - '0');
    }
    if (value > 65535)
        return false;
    *out = (uint16_t)value;
    return true;
}

/* Splits "A.B.C.D:port" or "[v6]:port" into host and port texts (in buf). */
static bool split_host_port(char *buf, char **host, char **port, bool *bracketed)
{
    *bracketed = buf[0] == '[';
    if (*bracketed) {
        char *close = strchr(buf, ']');
        if (!close || close[1] != ':')
            return false;
        *close = '\0';
        *host = buf + 1;
        *port = close + 2;
        return true;
    }
    char *colon = strchr(buf, ':');
    if (!colon || strchr(colon + 1, ':'))
        return false;
    *colon = '\0';
    *host = buf;
    *port = colon + 1;
    return true;
}

int vf_cfg_parse_tcp_listen(vf_cfg_ctx *ctx, const config_setting_t *at, vf_config *cfg)
{
    static const char *const where = "listen.tcp";
    const char *text;
    if (vf_cfg_get_string(ctx, at, where, TCP_TEXT_MAX, &text) != 0)
        return -1;
    char buf[TCP_TEXT_MAX + 1];
    snprintf(buf, sizeof buf, "%s", text);
    char *host, *port_text;
    bool bracketed;
    uint16_t port;
    if (!split_host_port(buf, &host, &port_text, &bracketed) || !parse_port(port_text, &port))
        return vf_cfg_fail(ctx, at, where,
                           "\"%s\" must be \"127.0.0.1:PORT\" or \"[::1]:PORT\" (an IP address "
                           "and a port 0..65535; IPv6 in brackets)", text);

    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    bool loopback;
    if (!bracketed && inet_pton(AF_INET, host, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        len = sizeof *in;
        loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (bracketed && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        len = sizeof *in6;
        loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    } else {
        return vf_cfg_fail(ctx, at, where,
                           "\"%s\" must be \"127.0.0.1:PORT\" or \"[::1]:PORT\" (an IP address, "
                           "not a name; IPv6 in brackets)", text);
    }
    if (!loopback)
        return vf_cfg_fail(ctx, at, where,
                           "%s is not a loopback address; bearer tokens cross this listener in "
                           "cleartext, so it may only bind 127.0.0.0/8 or [::1]", host);
    char *copy = strdup(text);
    if (!copy)
        return vf_cfg_fail(ctx, at, where, "out of memory");
    free(cfg->tcp_listen);
    cfg->tcp_listen = copy;
    cfg->tcp_addr = ss;
    cfg->tcp_addr_len = len;
    return 0;
}

/* ---- tenants[i].tokens ---- */

/* Decodes 64 hex digits into *out; NULL on success, else the reason. */
static const char *decode_hex(const char *hex, vf_token_hash *out)
{
    for (size_t i = 0; i < VF_TOKEN_HASH_LEN; i++) {
        int hi = vf_hex_digit((unsigned char)hex[2 * i]), lo = vf_hex_digit((unsigned char)hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return "has a character that is not a hex digit after \"" HASH_PREFIX "\"";
        out->sha256[i] = (uint8_t)(hi << 4 | lo);
    }
    if (memcmp(out->sha256, empty_sha256, VF_TOKEN_HASH_LEN) == 0)
        return "is the SHA-256 of an empty token (was $TOKEN unset?)";
    return NULL;
}

/* Fills *out from "sha256:<64 hex>" or reports why the entry is not that. */
static int parse_token_entry(vf_cfg_ctx *ctx, const config_setting_t *elem, const char *path,
                             const char *text, vf_token_hash *out)
{
    size_t plen = strlen(HASH_PREFIX);
    if (strncmp(text, HASH_PREFIX, plen) != 0)
        return vf_cfg_fail(ctx, elem, path,
                           "must be \"" HASH_PREFIX "\" followed by the token's SHA-256 in hex "
                           "(make it with: printf %%s \"$TOKEN\" | sha256sum); plaintext "
                           "tokens are not accepted");
    size_t hex_len = strlen(text + plen);
    if (hex_len != HASH_HEX_LEN)
        return vf_cfg_fail(ctx, elem, path,
                           "has %zu hex digits after \"" HASH_PREFIX "\"; a SHA-256 has %u",
                           hex_len, HASH_HEX_LEN);
    const char *why = decode_hex(text + plen, out);
    return why ? vf_cfg_fail(ctx, elem, path, "%s", why) : 0;
}

int vf_cfg_parse_tokens(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                        vf_tenant_config *t)
{
    int n;
    if (vf_cfg_want_seq(ctx, s, where, MAX_TOKENS, &n) != 0)
        return -1;
    t->tokens = calloc((size_t)n + 1, sizeof *t->tokens);
    if (!t->tokens)
        return vf_cfg_fail(ctx, s, where, "out of memory");
    for (int i = 0; i < n; i++) {
        const config_setting_t *elem = config_setting_get_elem(s, (unsigned)i);
        char path[VF_CFG_PATH_MAX];
        const char *text;
        vf_cfg_index(path, where, i);
        if (vf_cfg_get_string(ctx, elem, path, TOKEN_TEXT_MAX, &text) != 0)
            return -1;
        vf_token_hash hash;
        if (parse_token_entry(ctx, elem, path, text, &hash) != 0)
            return -1;
        for (int k = 0; k < i; k++)
            if (memcmp(t->tokens[k].sha256, hash.sha256, VF_TOKEN_HASH_LEN) == 0)
                return vf_cfg_fail(ctx, elem, path, "repeats %s[%d]", where, k);
        t->tokens[i] = hash;
        t->n_tokens = (size_t)i + 1;
    }
    return 0;
}

int vf_cfg_check_tokens_unique(vf_cfg_ctx *ctx, const config_setting_t *s, const char *where,
                               const vf_tenant_config *t, const vf_tenant_config *prev,
                               size_t prev_index)
{
    for (size_t u = 0; u < t->n_tokens; u++)
        for (size_t v = 0; v < prev->n_tokens; v++) {
            if (memcmp(t->tokens[u].sha256, prev->tokens[v].sha256, VF_TOKEN_HASH_LEN) != 0)
                continue;
            const config_setting_t *list = config_setting_get_member(s, "tokens");
            const config_setting_t *at = list ? config_setting_get_elem(list, (unsigned)u) : NULL;
            char list_path[VF_CFG_PATH_MAX], path[VF_CFG_PATH_MAX];
            vf_cfg_join(list_path, where, "tokens");
            vf_cfg_index(path, list_path, (int)u);
            return vf_cfg_fail(ctx, at ? at : s, path,
                               "the same token hash is already tenants[%zu].tokens[%zu] (tenant "
                               "\"%s\"); a token must identify one tenant",
                               prev_index, v, prev->name);
        }
    return 0;
}
