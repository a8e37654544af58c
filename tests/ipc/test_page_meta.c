/* The "meta" map of a worker result and the job's "render" mask: round
 * trips, and one test per way a hostile worker can break the strict decoder. */
#include <criterion/criterion.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc_messages.h"
#include "ipc/ipc_page_meta.h"

/* A result whose meta map is built by hand: the base keys page_chars,
 * main_chars and extract, minus drop, then extra(pk) appends entries
 * (extra_pairs of them). */
typedef void (*meta_extra)(msgpack_packer *pk);

static void pstr(msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}
#define PS(pk, s) pstr((pk), (s), strlen(s))

static vf_ipc_err decode_meta(const char *drop, meta_extra extra, uint32_t extra_pairs,
                              vf_result *res, const char **field)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 6);
    PS(&pk, "v"); msgpack_pack_uint64(&pk, 1);
    PS(&pk, "detail"); PS(&pk, "");
    PS(&pk, "status"); msgpack_pack_uint64(&pk, 200);
    PS(&pk, "text"); msgpack_pack_bin(&pk, 0);
    PS(&pk, "body_bytes"); msgpack_pack_uint64(&pk, 0);
    PS(&pk, "meta");
    static const char *const base[] = { "page_chars", "main_chars", "extract" };
    uint32_t n = extra_pairs;
    for (size_t i = 0; i < 3; i++)
        n += drop == NULL || strcmp(drop, base[i]) != 0;
    msgpack_pack_map(&pk, n);
    for (size_t i = 0; i < 3; i++) {
        if (drop != NULL && strcmp(drop, base[i]) == 0)
            continue;
        PS(&pk, base[i]);
        if (i < 2)
            msgpack_pack_uint64(&pk, 10 + i);
        else
            PS(&pk, "main");
    }
    if (extra)
        extra(&pk);
    memset(res, 0xA5, sizeof *res);
    *field = "unset";
    vf_ipc_err err = vf_result_decode(sb.data, sb.size, 16, res, field);
    msgpack_sbuffer_destroy(&sb);
    if (err != VF_IPC_OK) {
        static const vf_result zero;
        cr_assert(memcmp(res, &zero, sizeof zero) == 0, "result not zeroed");
    }
    return err;
}

static void expect(const char *drop, meta_extra extra, uint32_t pairs, vf_ipc_err want)
{
    vf_result res;
    const char *field;
    vf_ipc_err err = decode_meta(drop, extra, pairs, &res, &field);
    cr_assert_eq(err, want, "got %s, want %s", vf_ipc_strerror(err), vf_ipc_strerror(want));
    if (want != VF_IPC_OK)
        cr_assert_str_eq(field, "meta");
    vf_result_free(&res);
}

Test(page_meta, round_trip_every_field)
{
    char *signals[] = { "login_form", "paywall:meter" };
    vf_page_meta meta = {
        .title = "Caf\xc3\xa9 news", .h1 = "Headline", .lang = "fr-CA",
        .canonical_url = "https://example.test/a", .description = "About things",
        .published = "2024-05-06T07:08:09Z", .charset = "shift_jis", .extract = "main",
        .page_chars = 12345, .main_chars = 678, .password_field = true,
        .signals = signals, .n_signals = 2,
    };
    vf_result in = { .detail = "", .http_status = 200, .text = (uint8_t *)"x", .text_len = 1,
                     .body_bytes = 1, .meta = &meta };
    void *buf;
    size_t len;
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_OK);
    vf_result out;
    const char *field;
    cr_assert_eq(vf_result_decode(buf, len, 1, &out, &field), VF_IPC_OK, "%s", field);
    free(buf);
    cr_assert_not_null(out.meta);
    cr_assert_str_eq(out.meta->title, "Caf\xc3\xa9 news");
    cr_assert_str_eq(out.meta->h1, "Headline");
    cr_assert_str_eq(out.meta->lang, "fr-CA");
    cr_assert_str_eq(out.meta->canonical_url, "https://example.test/a");
    cr_assert_str_eq(out.meta->description, "About things");
    cr_assert_str_eq(out.meta->published, "2024-05-06T07:08:09Z");
    cr_assert_str_eq(out.meta->charset, "shift_jis");
    cr_assert_str_eq(out.meta->extract, "main");
    cr_assert_eq(out.meta->page_chars, 12345);
    cr_assert_eq(out.meta->main_chars, 678);
    cr_assert(out.meta->password_field);
    cr_assert_eq(out.meta->n_signals, 2);
    cr_assert_str_eq(out.meta->signals[1], "paywall:meter");
    vf_result_free(&out);
    cr_assert_null(out.meta);
}

Test(page_meta, absent_meta_decodes_to_null_and_minimal_meta_keeps_nulls)
{
    vf_result in = { .detail = "", .text = (uint8_t *)"", .text_len = 0 };
    void *buf;
    size_t len;
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_OK);
    vf_result out;
    const char *field;
    cr_assert_eq(vf_result_decode(buf, len, 0, &out, &field), VF_IPC_OK);
    free(buf);
    cr_assert_null(out.meta);
    vf_result_free(&out);

    cr_assert_eq(decode_meta(NULL, NULL, 0, &out, &field), VF_IPC_OK);
    cr_assert_not_null(out.meta);
    cr_assert_null(out.meta->title);
    cr_assert_null(out.meta->published);
    cr_assert_eq(out.meta->n_signals, 0);
    cr_assert_str_eq(out.meta->extract, "main");
    vf_result_free(&out);
}

static void ex_unknown(msgpack_packer *pk) { PS(pk, "colour"); PS(pk, "red"); }
static void ex_dup(msgpack_packer *pk) { PS(pk, "page_chars"); msgpack_pack_uint64(pk, 3); }
static void ex_title_int(msgpack_packer *pk) { PS(pk, "title"); msgpack_pack_uint64(pk, 3); }
static void ex_chars_str(msgpack_packer *pk) { PS(pk, "lang"); PS(pk, "en"); PS(pk, "password_field"); PS(pk, "yes"); }
static void ex_neg(msgpack_packer *pk) { PS(pk, "lang"); PS(pk, "en"); PS(pk, "signals"); msgpack_pack_int64(pk, -1); }
static void ex_int_key(msgpack_packer *pk) { msgpack_pack_uint64(pk, 7); PS(pk, "x"); }

Test(page_meta, rejects_unknown_duplicate_and_wrong_types)
{
    expect(NULL, ex_unknown, 1, VF_IPC_ERR_UNKNOWN_FIELD);
    expect(NULL, ex_dup, 1, VF_IPC_ERR_DUPLICATE);
    expect(NULL, ex_title_int, 1, VF_IPC_ERR_TYPE);
    expect(NULL, ex_chars_str, 2, VF_IPC_ERR_TYPE);
    expect(NULL, ex_neg, 2, VF_IPC_ERR_TYPE);
    expect(NULL, ex_int_key, 1, VF_IPC_ERR_TYPE);
}

Test(page_meta, rejects_missing_sizes_or_extract)
{
    expect("page_chars", NULL, 0, VF_IPC_ERR_MISSING);
    expect("main_chars", NULL, 0, VF_IPC_ERR_MISSING);
    expect("extract", NULL, 0, VF_IPC_ERR_MISSING);
}

static size_t fill_len;
static void ex_title_fill(msgpack_packer *pk)
{
    char *s = malloc(fill_len);
    memset(s, 'a', fill_len);
    PS(pk, "title");
    pstr(pk, s, fill_len);
    free(s);
}
static void ex_canon_fill(msgpack_packer *pk)
{
    char *s = malloc(fill_len);
    memset(s, 'u', fill_len);
    PS(pk, "canonical_url");
    pstr(pk, s, fill_len);
    free(s);
}

Test(page_meta, string_caps_are_exact)
{
    fill_len = VF_META_MAX_TITLE;
    expect(NULL, ex_title_fill, 1, VF_IPC_OK);
    fill_len = VF_META_MAX_TITLE + 1;
    expect(NULL, ex_title_fill, 1, VF_IPC_ERR_RANGE);
    fill_len = VF_META_MAX_URL;
    expect(NULL, ex_canon_fill, 1, VF_IPC_OK);
    fill_len = VF_META_MAX_URL + 1;
    expect(NULL, ex_canon_fill, 1, VF_IPC_ERR_RANGE);
}

static void ex_nul(msgpack_packer *pk) { PS(pk, "title"); pstr(pk, "a\0b", 3); }
static void ex_bad_utf8(msgpack_packer *pk) { PS(pk, "description"); PS(pk, "a\xc0\xafz"); }
static void ex_surrogate(msgpack_packer *pk) { PS(pk, "h1"); PS(pk, "\xed\xa0\x80"); }
static void ex_truncated_utf8(msgpack_packer *pk) { PS(pk, "lang"); PS(pk, "e\xe2\x82"); }

Test(page_meta, rejects_nul_and_invalid_utf8)
{
    expect(NULL, ex_nul, 1, VF_IPC_ERR_RANGE);
    expect(NULL, ex_bad_utf8, 1, VF_IPC_ERR_RANGE);
    expect(NULL, ex_surrogate, 1, VF_IPC_ERR_RANGE);
    expect(NULL, ex_truncated_utf8, 1, VF_IPC_ERR_RANGE);
}

static vf_ipc_err decode_extract(const char *value)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    PS(&pk, "page_chars"); msgpack_pack_uint64(&pk, 1);
    PS(&pk, "main_chars"); msgpack_pack_uint64(&pk, 1);
    PS(&pk, "extract"); PS(&pk, value);
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    cr_assert_eq(msgpack_unpack_next(&up, sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    vf_page_meta *m = (vf_page_meta *)1;
    const char *field;
    vf_ipc_err err = vf_page_meta_unpack(&up.data, &m, &field);
    if (err != VF_IPC_OK)
        cr_assert_null(m);
    vf_page_meta_destroy(m);
    msgpack_unpacked_destroy(&up);
    msgpack_sbuffer_destroy(&sb);
    return err;
}

Test(page_meta, extract_is_main_or_page_only)
{
    cr_assert_eq(decode_extract("main"), VF_IPC_OK);
    cr_assert_eq(decode_extract("page"), VF_IPC_OK);
    cr_assert_eq(decode_extract("Main"), VF_IPC_ERR_RANGE);
    cr_assert_eq(decode_extract(""), VF_IPC_ERR_RANGE);
    cr_assert_eq(decode_extract("mainx"), VF_IPC_ERR_RANGE);
}

static size_t n_sig;
static const char *sig_value = "ok";
static void ex_signals(msgpack_packer *pk)
{
    PS(pk, "signals");
    msgpack_pack_array(pk, n_sig);
    for (size_t i = 0; i < n_sig; i++)
        PS(pk, sig_value);
}

Test(page_meta, signal_count_and_shape_are_capped)
{
    n_sig = VF_META_MAX_SIGNALS;
    sig_value = "cookie_wall";
    expect(NULL, ex_signals, 1, VF_IPC_OK);
    n_sig = VF_META_MAX_SIGNALS + 1;
    expect(NULL, ex_signals, 1, VF_IPC_ERR_RANGE);
    n_sig = 1;
    sig_value = "has space";
    expect(NULL, ex_signals, 1, VF_IPC_ERR_RANGE);
    sig_value = "";
    expect(NULL, ex_signals, 1, VF_IPC_ERR_RANGE);
    sig_value = "caf\xc3\xa9";
    expect(NULL, ex_signals, 1, VF_IPC_ERR_RANGE);
    sig_value = "0123456789012345678901234567890123456789012345678901234567890123"; /* 64 */
    expect(NULL, ex_signals, 1, VF_IPC_OK);
    sig_value = "0123456789012345678901234567890123456789012345678901234567890123x";
    expect(NULL, ex_signals, 1, VF_IPC_ERR_RANGE);
}

Test(page_meta, encoder_refuses_what_the_decoder_would)
{
    char big[VF_META_MAX_TITLE + 2];
    memset(big, 'b', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    vf_page_meta meta = { .extract = "main", .title = big };
    vf_result in = { .detail = "", .text = (uint8_t *)"", .meta = &meta };
    void *buf = (void *)1;
    size_t len;
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_ERR_RANGE);
    cr_assert_null(buf);
    meta.title = "fine";
    meta.extract = "everything";
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_ERR_RANGE);
    meta.extract = "page";
    meta.lang = "\xff";
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_ERR_RANGE);
    meta.lang = "en";
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_OK);
    free(buf);
}

Test(page_meta, add_signal_caps_count_and_shape)
{
    vf_page_meta m = { 0 };
    cr_assert_not(vf_page_meta_add_signal(&m, "two words"));
    for (size_t i = 0; i < VF_META_MAX_SIGNALS; i++)
        cr_assert(vf_page_meta_add_signal(&m, "s"));
    cr_assert_not(vf_page_meta_add_signal(&m, "s"));
    cr_assert_eq(m.n_signals, VF_META_MAX_SIGNALS);
    vf_page_meta_clear(&m);
    cr_assert_eq(m.n_signals, 0);
}

static vf_ipc_err job_render_round_trip(uint32_t render, uint32_t *got)
{
    vf_job in = { .url = "https://example.test/", .connect_ip = "192.0.2.1", .port = 443,
                  .timeout_ms = 1000, .max_body = 1024, .mode = VF_MODE_RAW, .render = render };
    void *buf;
    size_t len;
    vf_ipc_err err = vf_job_encode(&in, &buf, &len);
    if (err != VF_IPC_OK)
        return err;
    vf_job out;
    err = vf_job_decode(buf, len, &out, NULL);
    free(buf);
    if (err == VF_IPC_OK)
        *got = out.render;
    vf_job_free(&out);
    return err;
}

Test(page_meta, job_render_mask_round_trips_and_refuses_conflicts)
{
    uint32_t got = 99;
    cr_assert_eq(job_render_round_trip(0, &got), VF_IPC_OK);
    cr_assert_eq(got, 0);
    cr_assert_eq(job_render_round_trip(VF_RENDER_TEXT | VF_RENDER_PAGE | VF_RENDER_LINKS_LIST, &got),
                 VF_IPC_OK);
    cr_assert_eq(got, VF_RENDER_TEXT | VF_RENDER_PAGE | VF_RENDER_LINKS_LIST);
    cr_assert_eq(job_render_round_trip(VF_RENDER_LINKS_NONE | VF_RENDER_LINKS_LIST, &got),
                 VF_IPC_ERR_RANGE);
    cr_assert_eq(job_render_round_trip(1u << 4, &got), VF_IPC_ERR_RANGE);
}
