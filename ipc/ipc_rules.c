/* Value rules shared by the encoder and the decoder (ipc_rules.h): the encoder
 * refuses what the decoder would refuse, so a well-behaved peer never trips one. */
#include "ipc/ipc_rules.h"

#include <string.h>
#include <strings.h>

#include "ipc/ipc_limits.h"

vf_ipc_err ipc_check_text(const char *s, size_t n, size_t cap)
{
    if (n > cap || (n > 0 && memchr(s, '\0', n) != NULL))
        return VF_IPC_ERR_RANGE;
    return VF_IPC_OK;
}

vf_ipc_err ipc_check_url(const char *s, size_t n)
{
    vf_ipc_err err = ipc_check_text(s, n, VF_IPC_MAX_URL);
    if (err != VF_IPC_OK)
        return err;
    bool http = n > 7 && strncasecmp(s, "http://", 7) == 0;
    bool https = n > 8 && strncasecmp(s, "https://", 8) == 0;
    return (http || https) ? VF_IPC_OK : VF_IPC_ERR_RANGE;
}

vf_ipc_err ipc_check_ip(const char *s, size_t n)
{
    vf_ipc_err err = ipc_check_text(s, n, VF_IPC_MAX_IP);
    return (err == VF_IPC_OK && n == 0) ? VF_IPC_ERR_RANGE : err;
}

/* RFC 6901: the empty pointer, or a sequence of "/token". */
vf_ipc_err ipc_check_pointer(const char *s, size_t n)
{
    vf_ipc_err err = ipc_check_text(s, n, VF_IPC_MAX_POINTER);
    if (err == VF_IPC_OK && n > 0 && s[0] != '/')
        err = VF_IPC_ERR_RANGE;
    return err;
}

/* Whole instructions only, and no empty program: the kernel would refuse it
 * anyway, but a truncated copy must never be mistaken for a smaller filter. */
vf_ipc_err ipc_check_bpf_len(size_t n)
{
    if (n == 0 || n > VF_IPC_MAX_BPF || n % VF_IPC_BPF_INSN_BYTES != 0)
        return VF_IPC_ERR_RANGE;
    return VF_IPC_OK;
}

/* "Name: value" with no CR/LF, so a header can never split a request. */
vf_ipc_err ipc_check_header_line(const char *s, size_t n)
{
    vf_ipc_err err = ipc_check_text(s, n, VF_IPC_MAX_HEADER_LINE);
    if (err != VF_IPC_OK)
        return err;
    if (memchr(s, '\r', n) != NULL || memchr(s, '\n', n) != NULL)
        return VF_IPC_ERR_RANGE;
    const char *colon = memchr(s, ':', n);
    return (colon == NULL || colon == s) ? VF_IPC_ERR_RANGE : VF_IPC_OK;
}

vf_ipc_err ipc_check_terr(const char *s, size_t n)
{
    static const char *const codes[] = {
        "connect", "tls", "timeout", "too_large", "protocol", "decode", "internal",
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (strlen(codes[i]) == n && memcmp(codes[i], s, n) == 0)
            return VF_IPC_OK;
    return VF_IPC_ERR_RANGE;
}

vf_ipc_err ipc_rule_short(const char *s, size_t n) { return ipc_check_text(s, n, VF_IPC_MAX_SHORT); }
vf_ipc_err ipc_rule_detail(const char *s, size_t n) { return ipc_check_text(s, n, VF_IPC_MAX_DETAIL); }
/* A Location header may be relative, so only its size and NULs are judged. */
vf_ipc_err ipc_rule_url_any(const char *s, size_t n) { return ipc_check_text(s, n, VF_IPC_MAX_URL); }

/* A NUL-terminated field, or NULL when nullable. */
vf_ipc_err ipc_check_cstr(const char *s, ipc_text_rule rule, bool nullable)
{
    if (s == NULL)
        return nullable ? VF_IPC_OK : VF_IPC_ERR_RANGE;
    return rule(s, strlen(s));
}
