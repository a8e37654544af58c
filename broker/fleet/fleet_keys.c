#include "broker/fleet/fleet_keys.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Fetched once: EVP_sha256() makes every digest look the algorithm up again
 * (a locked provider-store query), which was most of a key's cost. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
    pthread_once(&sha256_once, fetch_sha256);
    return sha256_md ? sha256_md : EVP_sha256();
}

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
    EVP_Digest(data, len, md, &mdlen, sha256(), NULL);
    to_hex(md, out, hex_len > 64 ? 64 : hex_len);
}

/* The first 128 bits of SHA-256 over the tagged parts, in hex. */
static void parts_hex(const char *const *parts, size_t n_parts, char hex[33])
{
    unsigned char md[32] = { 0 };
    unsigned int mdlen = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (c && EVP_DigestInit_ex(c, sha256(), NULL) == 1) {
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
    to_hex(md, hex, 32);
}

void vf_fleet_key(char out[VF_FLEET_KEY_MAX], const char *prefix, const char *kind,
                  const char *const *parts, size_t n_parts, const char *suffix)
{
    vf_fleet_keys(&out, 1, prefix, kind, parts, n_parts, &suffix);
}

void vf_fleet_keys(char *const *out, size_t n_out, const char *prefix, const char *kind,
                   const char *const *parts, size_t n_parts, const char *const *suffixes)
{
    char hex[33];
    parts_hex(parts, n_parts, hex);
    for (size_t i = 0; i < n_out; i++)
        snprintf(out[i], VF_FLEET_KEY_MAX, "%s%s:%s%s", prefix, kind, hex, suffixes[i] ? suffixes[i] : "");
}
