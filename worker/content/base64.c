#include "worker/content/base64.h"

#include <stdint.h>

static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    /* The credential proxy masks a key's base64 with '*' (stream_mask.h):
     * read as zero bits, the key becomes a gap instead of breaking the page. */
    if (c == '*')
        return 0;
    return -1;
}

bool vf_base64_decode_in_place(char *buf, size_t len, size_t *out_len)
{
    size_t o = 0, pad = 0;
    uint32_t acc = 0;
    unsigned n = 0;   /* sextets in acc */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\r' || c == '\n' || c == ' ' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = sextet(c);
        if (v < 0 || pad > 0)
            return false;
        acc = acc << 6 | (uint32_t)v;
        if (++n == 4) {
            buf[o++] = (char)(acc >> 16);
            buf[o++] = (char)(acc >> 8);
            buf[o++] = (char)acc;
            acc = 0;
            n = 0;
        }
    }
    if (n == 1 || pad > 2 || (pad > 0 && n + pad != 4))
        return false;
    if (n == 2)
        buf[o++] = (char)(acc >> 4);
    if (n == 3) {
        buf[o++] = (char)(acc >> 10);
        buf[o++] = (char)(acc >> 2);
    }
    *out_len = o;
    return true;
}
