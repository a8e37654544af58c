/* A worker sends its result's text from where it lies (issue 15): the
 * message is encoded around the text (vf_result_encode_split) and the
 * frame is sent in pieces (vf_ipc_send_frame_parts). The broker reads the
 * same bytes as before: head + text + tail is vf_result_encode's message,
 * and a frame in parts is one payload. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ipc_frame.h"
#include "ipc/ipc_messages.h"

static void expect_same_bytes(const vf_result *r)
{
    void *whole, *head, *tail;
    size_t whole_len, head_len, tail_len;
    cr_assert_eq(vf_result_encode(r, &whole, &whole_len), VF_IPC_OK);
    cr_assert_eq(vf_result_encode_split(r, &head, &head_len, &tail, &tail_len), VF_IPC_OK);
    cr_assert_eq(head_len + r->text_len + tail_len, whole_len);
    cr_assert(memcmp(whole, head, head_len) == 0, "head differs");
    if (r->text_len)
        cr_assert(memcmp((char *)whole + head_len, r->text, r->text_len) == 0, "text differs");
    cr_assert(memcmp((char *)whole + head_len + r->text_len, tail, tail_len) == 0, "tail differs");
    free(whole);
    free(head);
    free(tail);
}

Test(ipc_split, head_text_and_tail_are_the_whole_message)
{
    static const uint8_t small[] = { 'a', 0, 'b', 0xff, 'c' };
    vf_result r = { .transport_error = "too_large", .malformed = "pointer /data is not a string",
                    .detail = "body exceeded 1048576 bytes", .http_status = 302,
                    .content_type = "text/html; charset=utf-8", .location = "/elsewhere?x=1",
                    .cache_control = "no-store", .text = (uint8_t *)small, .text_len = sizeof small,
                    .body_bytes = UINT64_MAX, .layers = VF_LAYER_SECCOMP };
    expect_same_bytes(&r);
    vf_result empty = { .detail = NULL };
    expect_same_bytes(&empty);

    size_t n = 3u << 20;
    uint8_t *big = malloc(n);
    cr_assert_not_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (uint8_t)('a' + i % 26);
    vf_page_meta meta = { .title = "A title", .lang = "en", .extract = "main", .page_chars = 9, .main_chars = 7 };
    vf_result page = { .detail = "", .http_status = 200, .content_type = "text/html", .text = big, .text_len = n,
                       .body_bytes = n, .layers = VF_LAYER_SECCOMP | VF_LAYER_NNP, .meta = &meta };
    expect_same_bytes(&page);
    free(big);
}

Test(ipc_split, a_split_encode_refuses_what_the_whole_one_refuses)
{
    void *head = (void *)1, *tail = (void *)1;
    size_t hl = 1, tl = 1;
    vf_result r = { .transport_error = "dns" };
    cr_assert_eq(vf_result_encode_split(&r, &head, &hl, &tail, &tl), VF_IPC_ERR_RANGE);
    cr_assert(head == NULL && tail == NULL && hl == 0 && tl == 0);
    r = (vf_result){ .text = NULL, .text_len = 3 };
    cr_assert_eq(vf_result_encode_split(&r, &head, &hl, &tail, &tl), VF_IPC_ERR_RANGE);
    cr_assert(head == NULL && tail == NULL);
}

/* Three parts, the middle one far above the socket buffer, one empty: the
 * reader gets one frame whose payload is the parts back to back. */
Test(ipc_split, a_frame_in_parts_is_read_as_one_payload)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    size_t n = 3u << 20;
    unsigned char *big = malloc(n);
    cr_assert_not_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (unsigned char)(i * 7 + 3);
    static const char head[] = "head:", tail[] = ":tail";
    pid_t child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        close(sv[1]);
        vf_ipc_part parts[4] = { { head, 5 }, { big, n }, { NULL, 0 }, { tail, 5 } };
        _exit(vf_ipc_send_frame_parts(sv[0], parts, 4, -1) == VF_IPC_OK ? 0 : 1);
    }
    close(sv[0]);
    void *payload;
    size_t len;
    cr_assert_eq(vf_ipc_recv_frame(sv[1], n + 10, vf_now_ms() + 10000, &payload, &len, NULL), VF_IPC_OK);
    cr_assert_eq(len, n + 10);
    cr_assert(memcmp(payload, head, 5) == 0);
    cr_assert(memcmp((char *)payload + 5, big, n) == 0);
    cr_assert(memcmp((char *)payload + 5 + n, tail, 5) == 0);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(payload);
    free(big);
    close(sv[1]);
}

Test(ipc_split, a_frame_in_too_many_parts_or_a_missing_part_is_not_sent)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    vf_ipc_part parts[VF_IPC_MAX_PARTS + 1];
    for (size_t i = 0; i < VF_IPC_MAX_PARTS + 1; i++)
        parts[i] = (vf_ipc_part){ "x", 1 };
    cr_assert_neq(vf_ipc_send_frame_parts(sv[0], parts, VF_IPC_MAX_PARTS + 1, -1), VF_IPC_OK);
    parts[1] = (vf_ipc_part){ NULL, 4 };
    cr_assert_neq(vf_ipc_send_frame_parts(sv[0], parts, 2, -1), VF_IPC_OK);
    close(sv[0]);
    char c;
    cr_assert_eq(read(sv[1], &c, 1), 0, "nothing was sent");
    close(sv[1]);
}
