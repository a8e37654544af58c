/* vf_job / vf_result encoding: round trips, and one test per way a hostile
 * peer can break the strict decoder. */
#include <criterion/criterion.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "hostile_msgpack.h"
#include "ipc/ipc_messages.h"

#define EXTRAS(...) (const hv_entry[]){ __VA_ARGS__ }, \
    sizeof((const hv_entry[]){ __VA_ARGS__ }) / sizeof(hv_entry)
#define NO_EXTRAS NULL, 0

static const hv_entry job_base[] = {
    HV_U("v", 1), HV_S("url", "https://example.test/page"), HV_S("ip", "192.0.2.7"),
    HV_U("port", 443), HV_U("timeout_ms", 15000), HV_U("max_body", 1048576), HV_U("mode", 0),
};
static const hv_entry result_base[] = {
    HV_U("v", 1), HV_S("detail", ""), HV_U("status", 200), HV_B("text", "hello", 5),
    HV_U("body_bytes", 5),
};
#define N_JOB_BASE (sizeof job_base / sizeof job_base[0])
#define N_RESULT_BASE (sizeof result_base / sizeof result_base[0])

static bool job_is_zero(const vf_job *j)
{
    static const vf_job zero;
    return memcmp(j, &zero, sizeof zero) == 0;
}

static bool result_is_zero(const vf_result *r)
{
    static const vf_result zero;
    return memcmp(r, &zero, sizeof zero) == 0;
}

static vf_ipc_err decode_job_bytes(const void *buf, size_t len, vf_job *job, const char **field)
{
    memset(job, 0xA5, sizeof *job); /* prove the decoder clears it */
    *field = "unset";
    vf_ipc_err err = vf_job_decode(buf, len, job, field);
    if (err != VF_IPC_OK)
        cr_assert(job_is_zero(job), "job not zeroed after %s", vf_ipc_strerror(err));
    return err;
}

static void expect_job_encode(const vf_job *job, vf_ipc_err want);

static void expect_job(const char *drop, const hv_entry *extra, size_t n_extra,
                       vf_ipc_err want, const char *want_field)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, job_base, N_JOB_BASE, drop, extra, n_extra);
    vf_job job;
    const char *field;
    vf_ipc_err err = decode_job_bytes(sb.data, sb.size, &job, &field);
    msgpack_sbuffer_destroy(&sb);
    cr_assert_eq(err, want, "got %s, want %s", vf_ipc_strerror(err), vf_ipc_strerror(want));
    cr_assert_str_eq(field, want_field);
    vf_job_free(&job);
}

static vf_ipc_err decode_result_with(const char *drop, const hv_entry *extra, size_t n_extra,
                                     size_t max_text, vf_result *res, const char **field)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, result_base, N_RESULT_BASE, drop, extra, n_extra);
    memset(res, 0xA5, sizeof *res);
    *field = "unset";
    vf_ipc_err err = vf_result_decode(sb.data, sb.size, max_text, res, field);
    /* The broker's in-frame decode must agree: same verdict, same field,
     * same text (it takes the frame, so it gets a copy of it). */
    void *frame = malloc(sb.size);
    cr_assert_not_null(frame);
    memcpy(frame, sb.data, sb.size);
    vf_result owned;
    const char *owned_field = "unset";
    vf_ipc_err owned_err = vf_result_decode_owned(frame, sb.size, max_text, &owned, &owned_field);
    msgpack_sbuffer_destroy(&sb);
    cr_assert_eq(owned_err, err, "in-frame decode: %s, copying decode: %s", vf_ipc_strerror(owned_err),
                 vf_ipc_strerror(err));
    cr_assert_str_eq(owned_field, *field);
    if (err != VF_IPC_OK) {
        cr_assert(result_is_zero(res), "result not zeroed after %s", vf_ipc_strerror(err));
        cr_assert(result_is_zero(&owned), "in-frame result not zeroed after %s", vf_ipc_strerror(err));
    } else {
        cr_assert_eq(owned.text_len, res->text_len);
        cr_assert_eq(memcmp(owned.text, res->text, res->text_len + 1), 0);
        vf_result_free(&owned);
    }
    return err;
}

static void expect_result(const char *drop, const hv_entry *extra, size_t n_extra,
                          vf_ipc_err want, const char *want_field)
{
    vf_result res;
    const char *field;
    vf_ipc_err err = decode_result_with(drop, extra, n_extra, 1024, &res, &field);
    cr_assert_eq(err, want, "got %s, want %s", vf_ipc_strerror(err), vf_ipc_strerror(want));
    cr_assert_str_eq(field, want_field);
    vf_result_free(&res);
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    cr_assert_not_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* ---- round trips ---------------------------------------------------------- */

Test(ipc, job_round_trip_all_fields)
{
    static const uint8_t ca[] = "-----BEGIN CERTIFICATE-----\n\0\x01\xff-----END CERTIFICATE-----\n";
    char *headers[] = { "Accept: text/html", "X-Trace: abc:def" };
    vf_job in = {
        .url = "https://example.test/a?b=c", .connect_ip = "2001:db8::7", .port = 8443,
        .timeout_ms = 600000, .max_body = 256u * 1024u * 1024u,
        .ca_pem = (uint8_t *)ca, .ca_pem_len = sizeof ca,
        .mode = VF_MODE_JSON, .json_pointer = "/data/content", .title_pointer = "/data/metadata/title",
        .headers = headers, .n_headers = 2, .test_hook = "socket_after_confine",
        .field = VF_FIELD_BASE64,
    };
    void *buf;
    size_t len;
    cr_assert_eq(vf_job_encode(&in, &buf, &len), VF_IPC_OK);

    vf_job out;
    const char *field;
    cr_assert_eq(decode_job_bytes(buf, len, &out, &field), VF_IPC_OK);
    free(buf);
    cr_assert_str_eq(out.url, in.url);
    cr_assert_str_eq(out.connect_ip, in.connect_ip);
    cr_assert_eq(out.port, 8443);
    cr_assert_eq(out.timeout_ms, 600000);
    cr_assert_eq(out.max_body, 256u * 1024u * 1024u);
    cr_assert_eq(out.ca_pem_len, sizeof ca);
    cr_assert_arr_eq(out.ca_pem, ca, sizeof ca);
    cr_assert_eq(out.mode, VF_MODE_JSON);
    cr_assert_str_eq(out.json_pointer, "/data/content");
    cr_assert_str_eq(out.title_pointer, "/data/metadata/title");
    cr_assert_eq(out.field, VF_FIELD_BASE64);
    cr_assert_eq(out.n_headers, 2);
    cr_assert_str_eq(out.headers[0], "Accept: text/html");
    cr_assert_str_eq(out.headers[1], "X-Trace: abc:def");
    cr_assert_str_eq(out.test_hook, "socket_after_confine");
    vf_job_free(&out);
    cr_assert(job_is_zero(&out));
}

Test(ipc, job_round_trip_minimal_leaves_optionals_empty)
{
    vf_job in = { .url = "http://127.0.0.1:8080/", .connect_ip = "127.0.0.1", .port = 8080,
                  .timeout_ms = 1, .max_body = 1, .mode = VF_MODE_RAW };
    void *buf;
    size_t len;
    cr_assert_eq(vf_job_encode(&in, &buf, &len), VF_IPC_OK);
    vf_job out;
    const char *field;
    cr_assert_eq(decode_job_bytes(buf, len, &out, &field), VF_IPC_OK);
    free(buf);
    cr_assert_str_eq(out.url, "http://127.0.0.1:8080/");
    cr_assert_eq(out.port, 8080);
    cr_assert_eq(out.timeout_ms, 1);
    cr_assert_eq(out.max_body, 1);
    cr_assert_null(out.ca_pem);
    cr_assert_eq(out.ca_pem_len, 0);
    cr_assert_null(out.json_pointer);
    cr_assert_null(out.headers);
    cr_assert_eq(out.n_headers, 0);
    cr_assert_null(out.test_hook);
    vf_job_free(&out);
}

Test(ipc, result_round_trip_all_fields)
{
    static const uint8_t text[] = { 'a', 0, 'b', 0xff, 'c' };
    vf_result in = {
        .transport_error = "too_large", .malformed = "pointer /data is not a string",
        .detail = "body exceeded 1048576 bytes", .http_status = 302,
        .content_type = "text/html; charset=utf-8", .location = "/elsewhere?x=1",
        .text = (uint8_t *)text, .text_len = sizeof text, .body_bytes = UINT64_MAX,
    };
    void *buf;
    size_t len;
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_OK);
    vf_result out;
    const char *field;
    cr_assert_eq(vf_result_decode(buf, len, sizeof text, &out, &field), VF_IPC_OK);
    free(buf);
    cr_assert_str_eq(out.transport_error, "too_large");
    cr_assert_str_eq(out.malformed, "pointer /data is not a string");
    cr_assert_str_eq(out.detail, "body exceeded 1048576 bytes");
    cr_assert_eq(out.http_status, 302);
    cr_assert_str_eq(out.content_type, "text/html; charset=utf-8");
    cr_assert_str_eq(out.location, "/elsewhere?x=1");
    cr_assert_eq(out.text_len, sizeof text);
    cr_assert_arr_eq(out.text, text, sizeof text);
    cr_assert_eq(out.text[out.text_len], '\0', "text must be NUL-terminated");
    cr_assert_eq(out.body_bytes, UINT64_MAX);
    vf_result_free(&out);
    cr_assert(result_is_zero(&out));
}

Test(ipc, result_encode_omits_null_optionals_and_empty_text)
{
    vf_result in = { .detail = NULL, .http_status = 0 };
    void *buf;
    size_t len;
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_OK);
    vf_result out;
    const char *field;
    cr_assert_eq(vf_result_decode(buf, len, 0, &out, &field), VF_IPC_OK);
    free(buf);
    cr_assert_null(out.transport_error);
    cr_assert_null(out.malformed);
    cr_assert_null(out.content_type);
    cr_assert_null(out.location);
    cr_assert_str_eq(out.detail, "");
    cr_assert_eq(out.http_status, 0);
    cr_assert_not_null(out.text);
    cr_assert_eq(out.text_len, 0);
    cr_assert_eq(out.text[0], '\0');
    vf_result_free(&out);
}

Test(ipc, result_nil_optionals_decode_to_null)
{
    vf_result res;
    const char *field;
    vf_ipc_err err = decode_result_with(NULL, EXTRAS(HV_NIL_("terr"), HV_NIL_("malformed"),
                                        HV_NIL_("ctype"), HV_NIL_("location")),
                                        1024, &res, &field);
    cr_assert_eq(err, VF_IPC_OK, "%s (%s)", vf_ipc_strerror(err), field);
    cr_assert_null(res.transport_error);
    cr_assert_null(res.malformed);
    cr_assert_null(res.content_type);
    cr_assert_null(res.location);
    cr_assert_eq(res.http_status, 200);
    cr_assert_eq(res.text_len, 5);
    cr_assert_str_eq((char *)res.text, "hello");
    vf_result_free(&res);
}

Test(ipc, job_decodes_hand_built_base_in_any_key_order)
{
    /* "v" last and "mode" first: order must not matter. */
    static const hv_entry reordered[] = {
        HV_U("mode", 1), HV_S("pointer", ""), HV_S("ip", "10.0.0.1"), HV_U("port", 80),
        HV_S("url", "HTTP://x.test/"), HV_U("timeout_ms", 1), HV_U("max_body", 9), HV_U("v", 1),
    };
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, reordered, sizeof reordered / sizeof reordered[0], NULL, NO_EXTRAS);
    vf_job job;
    const char *field;
    cr_assert_eq(decode_job_bytes(sb.data, sb.size, &job, &field), VF_IPC_OK);
    msgpack_sbuffer_destroy(&sb);
    cr_assert_eq(job.mode, VF_MODE_JSON);
    cr_assert_str_eq(job.json_pointer, "");
    cr_assert_eq(job.max_body, 9);
    vf_job_free(&job);
}

/* ---- job rejections ------------------------------------------------------- */

Test(ipc, job_rejects_top_level_not_a_map)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 1);
    msgpack_pack_uint64(&pk, 1);
    vf_job job;
    const char *field;
    cr_assert_eq(decode_job_bytes(sb.data, sb.size, &job, &field), VF_IPC_ERR_TYPE);
    cr_assert_str_eq(field, "");
    msgpack_sbuffer_destroy(&sb);
}

Test(ipc, job_rejects_unknown_key)
{
    expect_job(NULL, EXTRAS(HV_U("proxy", 1)), VF_IPC_ERR_UNKNOWN_FIELD, "");
}

Test(ipc, job_rejects_non_string_key)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_uint64(&pk, 7);
    msgpack_pack_uint64(&pk, 7);
    vf_job job;
    const char *field;
    cr_assert_eq(decode_job_bytes(sb.data, sb.size, &job, &field), VF_IPC_ERR_TYPE);
    msgpack_sbuffer_destroy(&sb);
}

Test(ipc, job_rejects_duplicate_key)
{
    expect_job(NULL, EXTRAS(HV_S("url", "https://other.test/")), VF_IPC_ERR_DUPLICATE, "url");
}

Test(ipc, job_rejects_wrong_types)
{
    expect_job("port", EXTRAS(HV_S("port", "443")), VF_IPC_ERR_TYPE, "port");
    expect_job("url", EXTRAS(HV_B("url", "https://x.test/", 15)), VF_IPC_ERR_TYPE, "url");
    expect_job("ip", EXTRAS(HV_NIL_("ip")), VF_IPC_ERR_TYPE, "ip");
    expect_job("mode", EXTRAS(HV_TRUE("mode")), VF_IPC_ERR_TYPE, "mode");
    expect_job("timeout_ms", EXTRAS(HV_F("timeout_ms")), VF_IPC_ERR_TYPE, "timeout_ms");
    expect_job(NULL, EXTRAS(HV_S("ca", "-----BEGIN")), VF_IPC_ERR_TYPE, "ca");
    expect_job(NULL, EXTRAS(HV_NIL_("ca")), VF_IPC_ERR_TYPE, "ca");
    expect_job(NULL, EXTRAS(HV_S("headers", "A: b")), VF_IPC_ERR_TYPE, "headers");
    expect_job(NULL, EXTRAS(HV_IA("headers", 1)), VF_IPC_ERR_TYPE, "headers");
    expect_job(NULL, EXTRAS(HV_M("hook")), VF_IPC_ERR_TYPE, "hook");
    expect_job("v", EXTRAS(HV_S("v", "1")), VF_IPC_ERR_TYPE, "v");
}

Test(ipc, job_rejects_missing_required_keys)
{
    static const char *const required[] = { "v", "url", "ip", "port", "timeout_ms",
                                            "max_body", "mode" };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        expect_job(required[i], NO_EXTRAS, VF_IPC_ERR_MISSING, required[i]);
}

Test(ipc, job_rejects_wrong_version_before_anything_else)
{
    expect_job("v", EXTRAS(HV_U("v", 2)), VF_IPC_ERR_VERSION, "v");
    expect_job("v", EXTRAS(HV_U("v", 0)), VF_IPC_ERR_VERSION, "v");
    expect_job("v", EXTRAS(HV_NEG_("v", -1)), VF_IPC_ERR_VERSION, "v");
    /* A future version may add keys: the version error must win. */
    expect_job("v", EXTRAS(HV_U("future", 1), HV_U("v", 2)), VF_IPC_ERR_VERSION, "v");
}

Test(ipc, job_rejects_nul_in_string)
{
    expect_job("url", EXTRAS(HV_SN("url", "https://a.test/\0evil", 20)), VF_IPC_ERR_RANGE, "url");
    expect_job(NULL, EXTRAS(HV_SN("hook", "ok\0", 3)), VF_IPC_ERR_RANGE, "hook");
}

Test(ipc, job_string_caps_are_exact)
{
    /* "https://" + filler totalling exactly the cap is fine; one more byte is not. */
    char *url = repeat('a', VF_IPC_MAX_URL + 1);
    memcpy(url, "https://", 8);
    url[VF_IPC_MAX_URL] = '\0';
    expect_job("url", EXTRAS(HV_S("url", url)), VF_IPC_OK, "");
    url[VF_IPC_MAX_URL] = 'a';
    expect_job("url", EXTRAS(HV_S("url", url)), VF_IPC_ERR_RANGE, "url");
    free(url);

    char *hook = repeat('h', VF_IPC_MAX_SHORT + 1);
    expect_job(NULL, EXTRAS(HV_S("hook", hook)), VF_IPC_ERR_RANGE, "hook");
    hook[VF_IPC_MAX_SHORT] = '\0';
    expect_job(NULL, EXTRAS(HV_S("hook", hook)), VF_IPC_OK, "");
    free(hook);

    char *ip = repeat('1', VF_IPC_MAX_IP + 1);
    expect_job("ip", EXTRAS(HV_S("ip", ip)), VF_IPC_ERR_RANGE, "ip");
    free(ip);
    expect_job("ip", EXTRAS(HV_S("ip", "")), VF_IPC_ERR_RANGE, "ip");

    char *ptr = repeat('/', VF_IPC_MAX_POINTER + 1);
    expect_job("mode", EXTRAS(HV_U("mode", 1), HV_S("pointer", ptr)), VF_IPC_ERR_RANGE, "pointer");
    free(ptr);
}

Test(ipc, job_rejects_non_http_url_and_bad_pointer)
{
    expect_job("url", EXTRAS(HV_S("url", "file:///etc/passwd")), VF_IPC_ERR_RANGE, "url");
    expect_job("url", EXTRAS(HV_S("url", "https://")), VF_IPC_ERR_RANGE, "url");
    expect_job("mode", EXTRAS(HV_U("mode", 1), HV_S("pointer", "data/content")),
               VF_IPC_ERR_RANGE, "pointer");
    expect_job("mode", EXTRAS(HV_U("mode", 1), HV_S("pointer", "/a"), HV_S("title_pointer", "t")),
               VF_IPC_ERR_RANGE, "title_pointer");
    /* A title belongs to a JSON answer only. */
    expect_job(NULL, EXTRAS(HV_S("title_pointer", "/t")), VF_IPC_ERR_RANGE, "title_pointer");
    vf_job raw_with_title = { .url = "http://a.test/", .connect_ip = "127.0.0.1", .port = 80, .timeout_ms = 1,
                              .max_body = 1, .mode = VF_MODE_RAW, .title_pointer = "/t" };
    expect_job_encode(&raw_with_title, VF_IPC_ERR_RANGE);
    /* So does what the pointed-to field holds; unknown bits are refused. */
    expect_job(NULL, EXTRAS(HV_U("field", VF_FIELD_HTML)), VF_IPC_ERR_RANGE, "field");
    expect_job("mode", EXTRAS(HV_U("mode", 1), HV_S("pointer", "/a"), HV_U("field", 4)), VF_IPC_ERR_RANGE, "field");
    vf_job raw_with_field = { .url = "http://a.test/", .connect_ip = "127.0.0.1", .port = 80, .timeout_ms = 1,
                              .max_body = 1, .mode = VF_MODE_RAW, .field = VF_FIELD_HTML };
    expect_job_encode(&raw_with_field, VF_IPC_ERR_RANGE);
}

Test(ipc, job_rejects_integers_out_of_range)
{
    expect_job("port", EXTRAS(HV_U("port", 0)), VF_IPC_ERR_RANGE, "port");
    expect_job("port", EXTRAS(HV_U("port", 65536)), VF_IPC_ERR_RANGE, "port");
    expect_job("port", EXTRAS(HV_NEG_("port", -443)), VF_IPC_ERR_RANGE, "port");
    expect_job("timeout_ms", EXTRAS(HV_U("timeout_ms", 0)), VF_IPC_ERR_RANGE, "timeout_ms");
    expect_job("timeout_ms", EXTRAS(HV_U("timeout_ms", 600001)), VF_IPC_ERR_RANGE, "timeout_ms");
    expect_job("max_body", EXTRAS(HV_U("max_body", 256u * 1024u * 1024u + 1u)),
               VF_IPC_ERR_RANGE, "max_body");
    expect_job("max_body", EXTRAS(HV_U("max_body", UINT64_MAX)), VF_IPC_ERR_RANGE, "max_body");
    expect_job("max_body", EXTRAS(HV_NEG_("max_body", INT64_MIN)), VF_IPC_ERR_RANGE, "max_body");
    expect_job("mode", EXTRAS(HV_U("mode", 2)), VF_IPC_ERR_RANGE, "mode");
    expect_job("port", EXTRAS(HV_U("port", 65535)), VF_IPC_OK, "");
}

Test(ipc, job_rejects_header_injection)
{
    const char *const crlf[] = { "X-Ok: 1", "X-Evil: a\r\nHost: metadata" };
    expect_job(NULL, EXTRAS(HV_SA("headers", crlf, 2)), VF_IPC_ERR_RANGE, "headers");
    const char *const lf[] = { "X-Evil: a\nb" };
    expect_job(NULL, EXTRAS(HV_SA("headers", lf, 1)), VF_IPC_ERR_RANGE, "headers");
    const char *const cr[] = { "X-Evil: a\rb" };
    expect_job(NULL, EXTRAS(HV_SA("headers", cr, 1)), VF_IPC_ERR_RANGE, "headers");
    const char *const no_name[] = { ": value" };
    expect_job(NULL, EXTRAS(HV_SA("headers", no_name, 1)), VF_IPC_ERR_RANGE, "headers");
    const char *const no_colon[] = { "Accept text/html" };
    expect_job(NULL, EXTRAS(HV_SA("headers", no_colon, 1)), VF_IPC_ERR_RANGE, "headers");
}

Test(ipc, job_header_count_cap_is_exact)
{
    const char *lines[VF_IPC_MAX_HEADERS + 1];
    for (size_t i = 0; i <= VF_IPC_MAX_HEADERS; i++)
        lines[i] = "X-N: v";
    expect_job(NULL, EXTRAS(HV_SA("headers", lines, VF_IPC_MAX_HEADERS)), VF_IPC_OK, "");
    expect_job(NULL, EXTRAS(HV_SA("headers", lines, VF_IPC_MAX_HEADERS + 1)),
               VF_IPC_ERR_RANGE, "headers");

    char *long_line = repeat('x', VF_IPC_MAX_HEADER_LINE + 1);
    long_line[1] = ':';
    const char *const one[] = { long_line };
    expect_job(NULL, EXTRAS(HV_SA("headers", one, 1)), VF_IPC_ERR_RANGE, "headers");
    free(long_line);
}

Test(ipc, job_json_mode_requires_pointer)
{
    expect_job("mode", EXTRAS(HV_U("mode", 1)), VF_IPC_ERR_MISSING, "pointer");
}

Test(ipc, job_rejects_trailing_bytes)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, job_base, N_JOB_BASE, NULL, NO_EXTRAS);
    vf_job job;
    const char *field;
    cr_assert_eq(decode_job_bytes(sb.data, sb.size, &job, &field), VF_IPC_OK);
    vf_job_free(&job);
    msgpack_sbuffer_write(&sb, "\xc0", 1);
    cr_assert_eq(decode_job_bytes(sb.data, sb.size, &job, &field), VF_IPC_ERR_TRAILING);
    msgpack_sbuffer_destroy(&sb);
}

Test(ipc, job_rejects_invalid_and_truncated_msgpack)
{
    vf_job job;
    const char *field;
    cr_assert_eq(decode_job_bytes("", 0, &job, &field), VF_IPC_ERR_MSGPACK);
    cr_assert_eq(decode_job_bytes("\xc1", 1, &job, &field), VF_IPC_ERR_MSGPACK);
    cr_assert_eq(decode_job_bytes("\x81\xa1v\xc1", 4, &job, &field), VF_IPC_ERR_MSGPACK);

    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, job_base, N_JOB_BASE, NULL, NO_EXTRAS);
    for (size_t cut = 1; cut < sb.size; cut++)
        cr_assert_eq(decode_job_bytes(sb.data, sb.size - cut, &job, &field), VF_IPC_ERR_MSGPACK,
                     "truncated by %zu", cut);
    msgpack_sbuffer_destroy(&sb);
}

Test(ipc, decoders_refuse_lying_container_counts_without_allocating)
{
    /* msgpack-c alone would try to allocate ~128 GiB for these headers
     * (ASan aborts on that), so getting a clean error proves the pre-scan. */
    static const char array32[] = "\xdd\xff\xff\xff\xff";
    static const char map32[] = "\xdf\xff\xff\xff\xff\xa1v\x01";
    static const char nested[] = "\x81\xa7headers\xdd\x7f\xff\xff\xff\xc0";
    vf_job job;
    vf_result res;
    const char *field;
    cr_assert_eq(decode_job_bytes(array32, 5, &job, &field), VF_IPC_ERR_MSGPACK);
    cr_assert_eq(decode_job_bytes(map32, 8, &job, &field), VF_IPC_ERR_MSGPACK);
    cr_assert_eq(decode_job_bytes(nested, sizeof nested - 1, &job, &field), VF_IPC_ERR_MSGPACK);
    cr_assert_eq(vf_result_decode(map32, 8, 10, &res, &field), VF_IPC_ERR_MSGPACK);
    cr_assert(result_is_zero(&res));
}

Test(ipc, decoders_bound_nesting_and_item_count)
{
    /* 100k nested arrays: must not recurse, must not crash. */
    size_t depth = 100000;
    char *deep = malloc(depth + 1);
    cr_assert_not_null(deep);
    memset(deep, 0x91, depth);
    deep[depth] = (char)0xc0;
    vf_job job;
    const char *field;
    cr_assert_eq(decode_job_bytes(deep, depth + 1, &job, &field), VF_IPC_ERR_RANGE);
    free(deep);

    /* A well-formed but huge array is refused before msgpack-c builds it. */
    expect_job(NULL, EXTRAS(HV_IA("headers", 5000)), VF_IPC_ERR_RANGE, "");
}

/* ---- result rejections ---------------------------------------------------- */

Test(ipc, result_text_cap_is_max_text)
{
    vf_result res;
    const char *field;
    cr_assert_eq(decode_result_with(NULL, NO_EXTRAS, 5, &res, &field), VF_IPC_OK);
    vf_result_free(&res);
    cr_assert_eq(decode_result_with(NULL, NO_EXTRAS, 4, &res, &field), VF_IPC_ERR_RANGE);
    cr_assert_str_eq(field, "text");
}

Test(ipc, result_rejects_missing_required_keys)
{
    static const char *const required[] = { "v", "detail", "status", "text", "body_bytes" };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        expect_result(required[i], NO_EXTRAS, VF_IPC_ERR_MISSING, required[i]);
}

Test(ipc, result_rejects_wrong_types)
{
    expect_result("text", EXTRAS(HV_S("text", "hello")), VF_IPC_ERR_TYPE, "text");
    expect_result("detail", EXTRAS(HV_NIL_("detail")), VF_IPC_ERR_TYPE, "detail");
    expect_result("status", EXTRAS(HV_S("status", "200")), VF_IPC_ERR_TYPE, "status");
    expect_result(NULL, EXTRAS(HV_U("terr", 1)), VF_IPC_ERR_TYPE, "terr");
    expect_result(NULL, EXTRAS(HV_B("ctype", "text/html", 9)), VF_IPC_ERR_TYPE, "ctype");
    expect_result(NULL, EXTRAS(HV_TRUE("location")), VF_IPC_ERR_TYPE, "location");
    expect_result("body_bytes", EXTRAS(HV_F("body_bytes")), VF_IPC_ERR_TYPE, "body_bytes");
}

Test(ipc, result_rejects_out_of_range_values)
{
    expect_result("status", EXTRAS(HV_U("status", 1000)), VF_IPC_ERR_RANGE, "status");
    expect_result("status", EXTRAS(HV_NEG_("status", -1)), VF_IPC_ERR_RANGE, "status");
    expect_result("body_bytes", EXTRAS(HV_NEG_("body_bytes", -5)), VF_IPC_ERR_RANGE, "body_bytes");
    expect_result(NULL, EXTRAS(HV_S("terr", "dns")), VF_IPC_ERR_RANGE, "terr");
    expect_result(NULL, EXTRAS(HV_SN("ctype", "text/html\0x", 11)), VF_IPC_ERR_RANGE, "ctype");
    char *detail = repeat('d', VF_IPC_MAX_DETAIL + 1);
    expect_result("detail", EXTRAS(HV_S("detail", detail)), VF_IPC_ERR_RANGE, "detail");
    detail[VF_IPC_MAX_DETAIL] = '\0';
    expect_result("detail", EXTRAS(HV_S("detail", detail)), VF_IPC_OK, "");
    free(detail);
    char *loc = repeat('l', VF_IPC_MAX_URL + 1);
    expect_result(NULL, EXTRAS(HV_S("location", loc)), VF_IPC_ERR_RANGE, "location");
    free(loc);
}

Test(ipc, result_rejects_unknown_duplicate_version_trailing)
{
    expect_result(NULL, EXTRAS(HV_S("cookie", "x")), VF_IPC_ERR_UNKNOWN_FIELD, "");
    expect_result(NULL, EXTRAS(HV_U("status", 404)), VF_IPC_ERR_DUPLICATE, "status");
    expect_result("v", EXTRAS(HV_U("v", 3)), VF_IPC_ERR_VERSION, "v");

    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, result_base, N_RESULT_BASE, NULL, NO_EXTRAS);
    msgpack_sbuffer_write(&sb, "\x00", 1);
    vf_result res;
    const char *field;
    cr_assert_eq(vf_result_decode(sb.data, sb.size, 100, &res, &field), VF_IPC_ERR_TRAILING);
    cr_assert(result_is_zero(&res));
    msgpack_sbuffer_destroy(&sb);
}

/* ---- encoder caps --------------------------------------------------------- */

static vf_job valid_job(void)
{
    return (vf_job){ .url = "https://example.test/", .connect_ip = "192.0.2.1", .port = 443,
                     .timeout_ms = 1000, .max_body = 1024, .mode = VF_MODE_RAW };
}

static void expect_job_encode(const vf_job *job, vf_ipc_err want)
{
    void *buf = (void *)1;
    size_t len = 1;
    vf_ipc_err err = vf_job_encode(job, &buf, &len);
    cr_assert_eq(err, want, "got %s, want %s", vf_ipc_strerror(err), vf_ipc_strerror(want));
    if (err == VF_IPC_OK) {
        free(buf);
    } else {
        cr_assert_null(buf);
        cr_assert_eq(len, 0);
    }
}

Test(ipc, job_encoder_enforces_caps)
{
    vf_job j = valid_job();
    expect_job_encode(&j, VF_IPC_OK);

    j = valid_job(); j.port = 0;                     expect_job_encode(&j, VF_IPC_ERR_RANGE);
    j = valid_job(); j.timeout_ms = 600001;          expect_job_encode(&j, VF_IPC_ERR_RANGE);
    j = valid_job(); j.max_body = 0;                 expect_job_encode(&j, VF_IPC_ERR_RANGE);
    j = valid_job(); j.url = NULL;                   expect_job_encode(&j, VF_IPC_ERR_RANGE);
    j = valid_job(); j.url = "ftp://x/";             expect_job_encode(&j, VF_IPC_ERR_RANGE);
    j = valid_job(); j.mode = VF_MODE_JSON;          expect_job_encode(&j, VF_IPC_ERR_RANGE);
    j = valid_job(); j.mode = (vf_response_mode)7;   expect_job_encode(&j, VF_IPC_ERR_RANGE);

    char *bad_headers[] = { "X-A: 1\r\nX-B: 2" };
    j = valid_job(); j.headers = bad_headers; j.n_headers = 1;
    expect_job_encode(&j, VF_IPC_ERR_RANGE);

    char *many[VF_IPC_MAX_HEADERS + 1];
    for (size_t i = 0; i <= VF_IPC_MAX_HEADERS; i++)
        many[i] = "X-N: 1";
    j = valid_job(); j.headers = many; j.n_headers = VF_IPC_MAX_HEADERS + 1;
    expect_job_encode(&j, VF_IPC_ERR_RANGE);

    char *long_url = repeat('u', VF_IPC_MAX_URL + 1);
    memcpy(long_url, "http://", 7);
    j = valid_job(); j.url = long_url;
    expect_job_encode(&j, VF_IPC_ERR_RANGE);
    free(long_url);

    /* The whole job must fit a job frame; the CA bundle is what could break it. */
    uint8_t *big_ca = calloc(1, VF_IPC_MAX_JOB_FRAME);
    cr_assert_not_null(big_ca);
    j = valid_job(); j.ca_pem = big_ca; j.ca_pem_len = VF_IPC_MAX_JOB_FRAME;
    expect_job_encode(&j, VF_IPC_ERR_RANGE);
    j.ca_pem_len = VF_IPC_MAX_JOB_FRAME - 4096;
    expect_job_encode(&j, VF_IPC_OK);
    free(big_ca);
}

Test(ipc, result_encoder_enforces_caps)
{
    void *buf;
    size_t len;
    vf_result r = { .transport_error = "dns" };
    cr_assert_eq(vf_result_encode(&r, &buf, &len), VF_IPC_ERR_RANGE);
    r = (vf_result){ .http_status = 1000 };
    cr_assert_eq(vf_result_encode(&r, &buf, &len), VF_IPC_ERR_RANGE);
    r = (vf_result){ .http_status = -1 };
    cr_assert_eq(vf_result_encode(&r, &buf, &len), VF_IPC_ERR_RANGE);
    r = (vf_result){ .text = NULL, .text_len = 3 };
    cr_assert_eq(vf_result_encode(&r, &buf, &len), VF_IPC_ERR_RANGE);
    char *ctype = repeat('c', VF_IPC_MAX_SHORT + 1);
    r = (vf_result){ .content_type = ctype };
    cr_assert_eq(vf_result_encode(&r, &buf, &len), VF_IPC_ERR_RANGE);
    free(ctype);
}

Test(ipc, strerror_names_are_stable_and_distinct)
{
    cr_assert_str_eq(vf_ipc_strerror(VF_IPC_ERR_TOO_LARGE), "too_large");
    cr_assert_str_eq(vf_ipc_strerror(VF_IPC_ERR_TRAILING), "trailing_bytes");
    cr_assert_str_eq(vf_ipc_strerror(VF_IPC_OK), "ok");
    for (int a = VF_IPC_OK; a <= VF_IPC_ERR_FD; a++) {
        cr_assert_neq(strlen(vf_ipc_strerror((vf_ipc_err)a)), 0);
        for (int b = a + 1; b <= VF_IPC_ERR_FD; b++)
            cr_assert_str_neq(vf_ipc_strerror((vf_ipc_err)a), vf_ipc_strerror((vf_ipc_err)b));
    }
}
