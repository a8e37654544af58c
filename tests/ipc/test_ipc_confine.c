/* The confinement fields of the wire: the job's seccomp program ("bpf"), the
 * preloaded-CA switch ("ca_preloaded"), the required layers ("require") and the
 * result's "layers". Optional, strictly typed and capped like everything else. */
#include <criterion/criterion.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "hostile_msgpack.h"
#include "ipc/ipc_messages.h"

#define EXTRAS(...) (const hv_entry[]){ __VA_ARGS__ }, \
    sizeof((const hv_entry[]){ __VA_ARGS__ }) / sizeof(hv_entry)

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

static vf_ipc_err job_with(const hv_entry *extra, size_t n_extra, vf_job *job, const char **field)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, job_base, N_JOB_BASE, NULL, extra, n_extra);
    vf_ipc_err err = vf_job_decode(sb.data, sb.size, job, field);
    msgpack_sbuffer_destroy(&sb);
    return err;
}

static void expect_job(const hv_entry *extra, size_t n_extra, vf_ipc_err want, const char *want_field)
{
    vf_job job;
    const char *field = "unset";
    vf_ipc_err err = job_with(extra, n_extra, &job, &field);
    cr_assert_eq(err, want, "got %s, want %s", vf_ipc_strerror(err), vf_ipc_strerror(want));
    cr_assert_str_eq(field, want_field);
    vf_job_free(&job);
}

static vf_ipc_err result_with(const hv_entry *extra, size_t n_extra, vf_result *res, const char **field)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    hv_build(&sb, result_base, N_RESULT_BASE, NULL, extra, n_extra);
    vf_ipc_err err = vf_result_decode(sb.data, sb.size, 1024, res, field);
    msgpack_sbuffer_destroy(&sb);
    return err;
}

static vf_job minimal_job(void)
{
    return (vf_job){ .url = "http://127.0.0.1:8080/", .connect_ip = "127.0.0.1", .port = 8080,
                     .timeout_ms = 1000, .max_body = 1024, .mode = VF_MODE_RAW };
}

Test(ipc_confine, job_round_trip_of_confinement_fields)
{
    uint8_t bpf[3 * VF_IPC_BPF_INSN_BYTES];
    for (size_t i = 0; i < sizeof bpf; i++)
        bpf[i] = (uint8_t)(i * 7 + 1);
    vf_job in = minimal_job();
    in.bpf = bpf;
    in.bpf_len = sizeof bpf;
    in.ca_preloaded = true;
    in.required_layers = VF_LAYER_SECCOMP | VF_LAYER_LANDLOCK | VF_LAYER_NAMESPACES;
    void *buf;
    size_t len;
    cr_assert_eq(vf_job_encode(&in, &buf, &len), VF_IPC_OK);
    vf_job out;
    cr_assert_eq(vf_job_decode(buf, len, &out, NULL), VF_IPC_OK);
    free(buf);
    cr_assert_eq(out.bpf_len, sizeof bpf);
    cr_assert_arr_eq(out.bpf, bpf, sizeof bpf);
    cr_assert(out.ca_preloaded);
    cr_assert_null(out.ca_pem);
    cr_assert_eq(out.required_layers, in.required_layers);
    vf_job_free(&out);
}

Test(ipc_confine, job_without_confinement_fields_leaves_them_empty)
{
    vf_job in = minimal_job();
    void *buf;
    size_t len;
    cr_assert_eq(vf_job_encode(&in, &buf, &len), VF_IPC_OK);
    vf_job out;
    cr_assert_eq(vf_job_decode(buf, len, &out, NULL), VF_IPC_OK);
    free(buf);
    cr_assert_null(out.bpf);
    cr_assert_eq(out.bpf_len, 0);
    cr_assert_not(out.ca_preloaded);
    cr_assert_eq(out.required_layers, 0);
    vf_job_free(&out);
}

Test(ipc_confine, job_bpf_must_be_whole_instructions_within_the_cap)
{
    static char prog[VF_IPC_MAX_BPF + VF_IPC_BPF_INSN_BYTES];
    expect_job(EXTRAS(HV_B("bpf", prog, VF_IPC_BPF_INSN_BYTES)), VF_IPC_OK, "");
    expect_job(EXTRAS(HV_B("bpf", prog, VF_IPC_MAX_BPF)), VF_IPC_OK, "");
    /* An empty bin is packed as length 0: hv treats n == 0 as strlen(""), i.e. 0. */
    expect_job(EXTRAS(HV_B("bpf", "", 0)), VF_IPC_ERR_RANGE, "bpf");
    expect_job(EXTRAS(HV_B("bpf", prog, 7)), VF_IPC_ERR_RANGE, "bpf");
    expect_job(EXTRAS(HV_B("bpf", prog, 9)), VF_IPC_ERR_RANGE, "bpf");
    expect_job(EXTRAS(HV_B("bpf", prog, VF_IPC_MAX_BPF + VF_IPC_BPF_INSN_BYTES)),
               VF_IPC_ERR_RANGE, "bpf");
    expect_job(EXTRAS(HV_S("bpf", "12345678")), VF_IPC_ERR_TYPE, "bpf");
    expect_job(EXTRAS(HV_NIL_("bpf")), VF_IPC_ERR_TYPE, "bpf");
}

Test(ipc_confine, job_require_and_ca_preloaded_are_typed_and_bounded)
{
    expect_job(EXTRAS(HV_U("require", VF_LAYER_ALL)), VF_IPC_OK, "");
    expect_job(EXTRAS(HV_U("require", VF_LAYER_ALL + 1)), VF_IPC_ERR_RANGE, "require");
    expect_job(EXTRAS(HV_NEG_("require", -1)), VF_IPC_ERR_RANGE, "require");
    expect_job(EXTRAS(HV_S("require", "seccomp")), VF_IPC_ERR_TYPE, "require");
    expect_job(EXTRAS(HV_TRUE("ca_preloaded")), VF_IPC_OK, "");
    expect_job(EXTRAS(HV_U("ca_preloaded", 1)), VF_IPC_ERR_TYPE, "ca_preloaded");
    expect_job(EXTRAS(HV_TRUE("ca_preloaded"), HV_TRUE("ca_preloaded")),
               VF_IPC_ERR_DUPLICATE, "ca_preloaded");
}

Test(ipc_confine, job_cannot_carry_both_a_ca_and_the_preloaded_switch)
{
    expect_job(EXTRAS(HV_B("ca", "pem", 3), HV_TRUE("ca_preloaded")), VF_IPC_ERR_RANGE,
               "ca_preloaded");
    vf_job j = minimal_job();
    j.ca_pem = (uint8_t *)"pem";
    j.ca_pem_len = 3;
    j.ca_preloaded = true;
    void *buf = (void *)1;
    size_t len = 1;
    cr_assert_eq(vf_job_encode(&j, &buf, &len), VF_IPC_ERR_RANGE);
    cr_assert_null(buf);
}

Test(ipc_confine, job_encoder_enforces_bpf_and_require_rules)
{
    uint8_t prog[16] = { 0 };
    void *buf;
    size_t len;
    vf_job j = minimal_job();
    j.bpf = prog; j.bpf_len = 12;
    cr_assert_eq(vf_job_encode(&j, &buf, &len), VF_IPC_ERR_RANGE);
    j = minimal_job(); j.bpf = NULL; j.bpf_len = 8;
    cr_assert_eq(vf_job_encode(&j, &buf, &len), VF_IPC_ERR_RANGE);
    j = minimal_job(); j.bpf = prog; j.bpf_len = 0;
    cr_assert_eq(vf_job_encode(&j, &buf, &len), VF_IPC_ERR_RANGE);
    j = minimal_job(); j.required_layers = VF_LAYER_ALL + 1;
    cr_assert_eq(vf_job_encode(&j, &buf, &len), VF_IPC_ERR_RANGE);
    j = minimal_job(); j.bpf = prog; j.bpf_len = 16;
    cr_assert_eq(vf_job_encode(&j, &buf, &len), VF_IPC_OK);
    free(buf);
}

Test(ipc_confine, result_layers_round_trip_and_default_to_none)
{
    vf_result in = { .detail = "", .http_status = 200, .text = (uint8_t *)"x", .text_len = 1,
                     .layers = VF_LAYER_SECCOMP | VF_LAYER_PIDNS };
    void *buf;
    size_t len;
    cr_assert_eq(vf_result_encode(&in, &buf, &len), VF_IPC_OK);
    vf_result out;
    cr_assert_eq(vf_result_decode(buf, len, 16, &out, NULL), VF_IPC_OK);
    free(buf);
    cr_assert_eq(out.layers, VF_LAYER_SECCOMP | VF_LAYER_PIDNS);
    vf_result_free(&out);

    const char *field = "unset";
    cr_assert_eq(result_with(NULL, 0, &out, &field), VF_IPC_OK);
    cr_assert_eq(out.layers, 0, "absent layers must mean none were reported");
    vf_result_free(&out);
}

Test(ipc_confine, result_layers_are_typed_and_bounded)
{
    vf_result res;
    const char *field = "unset";
    cr_assert_eq(result_with(EXTRAS(HV_U("layers", VF_LAYER_ALL)), &res, &field), VF_IPC_OK);
    cr_assert_eq(res.layers, VF_LAYER_ALL);
    vf_result_free(&res);
    cr_assert_eq(result_with(EXTRAS(HV_U("layers", VF_LAYER_ALL + 1)), &res, &field),
                 VF_IPC_ERR_RANGE);
    cr_assert_str_eq(field, "layers");
    cr_assert_eq(result_with(EXTRAS(HV_S("layers", "all")), &res, &field), VF_IPC_ERR_TYPE);
    cr_assert_str_eq(field, "layers");
    cr_assert_eq(result_with(EXTRAS(HV_U("layers", 1), HV_U("layers", 1)), &res, &field),
                 VF_IPC_ERR_DUPLICATE);

    vf_result bad = { .layers = VF_LAYER_ALL + 1 };
    void *buf;
    size_t len;
    cr_assert_eq(vf_result_encode(&bad, &buf, &len), VF_IPC_ERR_RANGE);
}

Test(ipc_confine, layer_names_are_stable_and_describe_joins_them)
{
    cr_assert_str_eq(vf_layer_name(VF_LAYER_SECCOMP), "seccomp");
    cr_assert_str_eq(vf_layer_name(VF_LAYER_LANDLOCK), "landlock");
    cr_assert_str_eq(vf_layer_name(VF_LAYER_PIDNS), "pidns");
    cr_assert_null(vf_layer_name(VF_LAYER_SECCOMP | VF_LAYER_PIDNS));
    cr_assert_null(vf_layer_name(1u << VF_LAYER_COUNT));
    for (uint32_t a = 0; a < VF_LAYER_COUNT; a++)
        for (uint32_t b = a + 1; b < VF_LAYER_COUNT; b++)
            cr_assert_str_neq(vf_layer_name(1u << a), vf_layer_name(1u << b));

    char buf[128];
    vf_layers_describe(VF_LAYER_UID | VF_LAYER_NETNS | VF_LAYER_SECCOMP, buf, sizeof buf);
    cr_assert_str_eq(buf, "uid,netns,seccomp");
    vf_layers_describe(0, buf, sizeof buf);
    cr_assert_str_eq(buf, "");
    char tiny[8];
    vf_layers_describe(VF_LAYER_ALL, tiny, sizeof tiny);
    cr_assert_str_eq(tiny, "rlimits", "a short buffer keeps whole names only");
}
