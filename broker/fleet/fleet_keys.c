#include "broker/fleet/fleet_keys.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

static void to_hex(const unsigned char *md, char *out, size_t hex_len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < hex_len; i++)
        out[i] = digits[(md[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
    out[hex_len] = '\0';
}

void vf_fleet_hash_hex(const void *data, size_t len, char *out, size_t hex_len)
{
    unsigned char md[32] = { 0 };
    unsigned int mdlen = 0;
    EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
    to_hex(md, out, hex_len > 64 ? 64 : hex_len);
}

void vf_fleet_key(char out[VF_FLEET_KEY_MAX], const char *prefix, const char *kind,
                  const char *const *parts, size_t n_parts, const char *suffix)
{
    unsigned char md[32] = { 0 };
    unsigned int mdlen = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1) {
        for (size_t i = 0; i < n_parts; i++) {
            /* one tag byte per part keeps ("ab","c") and ("a","bc") apart, and NULL apart from "" */
            unsigned char tag = parts[i] ? 1 : 0;
            EVP_DigestUpdate(c, &tag, 1);
            if (parts[i])
                EVP_DigestUpdate(c, parts[i], strlen(parts[i]) + 1);
        }
        EVP_DigestFinal_ex(c, md, &mdlen);
    }
    EVP_MD_CTX_free(c);
    char hex[33];
    to_hex(md, hex, 32);
    snprintf(out, VF_FLEET_KEY_MAX, "%s%s:%s%s", prefix, kind, hex, suffix ? suffix : "");
}
