/* Same-length masking of secrets in the provider stream, across read boundaries. */
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/mask_forms.h"
#include "broker/lookup/stream_mask.h"

static char *run(const char *input, size_t chunk)
{
    const char *needles[] = { "SECRETKEY123", "SECRETKEY123%2B" };
    size_t lens[] = { 12, 15 };
    vf_stream_mask m;
    vf_stream_mask_init(&m, needles, lens, 2);
    size_t n = strlen(input), got = 0;
    char *all = calloc(1, n + 1);
    for (size_t off = 0; off < n; off += chunk) {
        size_t take = n - off < chunk ? n - off : chunk;
        char *out;
        size_t out_len;
        cr_assert_eq(vf_stream_mask_feed(&m, input + off, take, &out, &out_len), 0);
        memcpy(all + got, out, out_len);
        got += out_len;
        free(out);
    }
    char *out;
    size_t out_len;
    vf_stream_mask_finish(&m, &out, &out_len);
    memcpy(all + got, out, out_len);
    got += out_len;
    free(out);
    vf_stream_mask_free(&m);
    cr_assert_eq(got, n, "length must be preserved (HTTP framing)");
    return all;
}

Test(stream_mask, masks_whole_and_split_values_for_every_chunk_size)
{
    const char *in = "HTTP/1.0 200 OK\r\nContent-Length: 40\r\n\r\nkey=SECRETKEY123 and SECRETKEY123%2B end";
    for (size_t chunk = 1; chunk <= strlen(in); chunk++) {
        char *out = run(in, chunk);
        cr_assert_null(strstr(out, "SECRETKEY"), "chunk %zu leaked: %s", chunk, out);
        cr_assert(strstr(out, "Content-Length: 40") != NULL);
        cr_assert(strstr(out, "************ and") != NULL, "chunk %zu: %s", chunk, out);
        free(out);
    }
}

Test(stream_mask, leaves_other_bytes_untouched)
{
    const char *in = "nothing secret here, just SECRETKEY12 (one short)";
    char *out = run(in, 7);
    cr_assert_str_eq(out, in);
    free(out);
}

/* Issue 13 item 8: the provider-stream mask covers HTML references in
 * upper- and lowercase hex, with "&#X", and zero-padded, decimal too. */
Test(stream_mask, masks_every_case_and_padding_of_html_references)
{
    const char *secrets[] = { "ab-cd/ef" };
    vf_mask_forms forms;
    cr_assert_eq(vf_mask_forms_build(&forms, secrets, 1), 0);
    static const char *spelled[] = {
        "ab&#X2D;cd&#X2F;ef", "ab&#x2D;cd&#x2F;ef", "ab&#X2d;cd&#X2f;ef", "ab&#x002d;cd&#x002f;ef",
        "ab&#x000002D;cd&#x000002F;ef", "ab&#045;cd&#047;ef", "ab&#0000045;cd&#0000047;ef",
        "ab\\u002Dcd\\u002Fef",
    };
    for (size_t i = 0; i < sizeof spelled / sizeof spelled[0]; i++) {
        const char *in = spelled[i];
        vf_stream_mask m;
        vf_stream_mask_init(&m, (const char *const *)forms.forms, forms.lens, forms.n);
        char *out, *rest;
        size_t out_len, rest_len;
        cr_assert_eq(vf_stream_mask_feed(&m, in, strlen(in), &out, &out_len), 0);
        vf_stream_mask_finish(&m, &rest, &rest_len);
        char all[128];
        cr_assert_lt(out_len + rest_len, sizeof all);
        memcpy(all, out, out_len);
        memcpy(all + out_len, rest, rest_len);
        all[out_len + rest_len] = '\0';
        cr_expect_eq(strspn(all, "*"), strlen(in), "[%s] became [%s]", in, all);
        free(out);
        free(rest);
        vf_stream_mask_free(&m);
    }
    vf_mask_forms_free(&forms);
}

/* Masks the whole of in with forms; the result has in's length. */
static char *mask_all(const vf_mask_forms *forms, const char *in)
{
    vf_stream_mask m;
    vf_stream_mask_init(&m, (const char *const *)forms->forms, forms->lens, forms->n);
    char *out, *rest;
    size_t out_len, rest_len;
    cr_assert_eq(vf_stream_mask_feed(&m, in, strlen(in), &out, &out_len), 0);
    vf_stream_mask_finish(&m, &rest, &rest_len);
    char *all = malloc(out_len + rest_len + 1);
    memcpy(all, out, out_len);
    memcpy(all + out_len, rest, rest_len);
    all[out_len + rest_len] = '\0';
    free(out);
    free(rest);
    vf_stream_mask_free(&m);
    return all;
}

/* A page that travels as base64 (Zyte's httpResponseBody) and quotes the
 * key, or the base64 of "key:" (a Basic header), at any offset: after the
 * mask, decoding the text ('*' as zero bits, as the worker does) yields
 * neither. */
Test(stream_mask, masks_a_key_inside_a_base64_page_at_every_alignment)
{
    const char *key = "k3y_With-32bytes/of+entropy.0123";
    char pair[64], pair_b64[96];
    snprintf(pair, sizeof pair, "%s:", key);
    EVP_EncodeBlock((unsigned char *)pair_b64, (const unsigned char *)pair, (int)strlen(pair));
    const char *secrets[] = { key, pair };
    vf_mask_forms forms;
    cr_assert_eq(vf_mask_forms_build(&forms, secrets, 2), 0);
    for (int quoted = 0; quoted < 2; quoted++)
        for (size_t offset = 0; offset < 6; offset++) {
            char page[256];
            snprintf(page, sizeof page, "%.*s<p>%s</p> the rest of the page", (int)offset, "xxxxxx",
                     quoted ? pair_b64 : key);
            char b64[512];
            EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)page, (int)strlen(page));
            char *masked = mask_all(&forms, b64);
            cr_assert(strchr(masked, '*'), "offset %zu: nothing masked in %s", offset, masked);
            for (char *p = masked; *p; p++)
                *p = *p == '*' ? 'A' : *p;
            unsigned char decoded[512];
            int n = EVP_DecodeBlock(decoded, (const unsigned char *)masked, (int)strlen(masked));
            cr_assert_gt(n, 0);
            const char *needle = quoted ? pair_b64 : key;
            cr_assert_null(memmem(decoded, (size_t)n, needle, strlen(needle)), "offset %zu: %s survived", offset,
                           needle);
            cr_assert_not_null(memmem(decoded, (size_t)n, "the rest of the page", 20), "the page around it survives");
            free(masked);
        }
    vf_mask_forms_free(&forms);
}
