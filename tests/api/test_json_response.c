/* A JSON answer of up to 64 KiB leaves in one send, head and body together
 * (it was a send for the head, then one per 32 KiB block); a larger one is
 * still streamed in blocks, so a large page is never copied whole. Both give
 * the same bytes. Seen through a SOCK_SEQPACKET pair handed to libmicrohttpd:
 * each send arrives as one record. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/api/json_response.h"

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_len, void **state)
{
    (void)url, (void)method, (void)version, (void)upload, (void)upload_len, (void)state;
    size_t text_len = *(const size_t *)cls;
    char *text = malloc(text_len);
    cr_assert_not_null(text);
    for (size_t i = 0; i < text_len; i++)
        text[i] = i % 61 == 60 ? '"' : (char)('a' + i % 26);   /* quotes to escape */
    json_t *doc = json_pack("{s:s, s:s%}", "status", "success", "text", text, text_len);
    free(text);
    size_t len = 0;
    struct MHD_Response *r = vf_json_response(doc, &len);
    cr_assert_not_null(r);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

#define RECEIVED_MAX (1u << 20)

/* Serves one answer with text_len characters of text; returns how many
 * records (sends) it came in and checks the body. */
static int records_for(size_t text_len)
{
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_NO_LISTEN_SOCKET, 0, NULL,
                                            NULL, answer, &text_len, MHD_OPTION_END);
    cr_assert_not_null(d);
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    struct sockaddr_un peer = { .sun_family = AF_UNIX };
    cr_assert_eq(MHD_add_connection(d, sv[1], (struct sockaddr *)&peer, sizeof peer), MHD_YES);
    const char req[] = "GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    cr_assert_eq(send(sv[0], req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
    char *got = malloc(RECEIVED_MAX);
    size_t total = 0;
    int records = 0;
    for (ssize_t n; (n = recv(sv[0], got + total, RECEIVED_MAX - total, 0)) > 0;) {
        total += (size_t)n;
        records++;
    }
    close(sv[0]);
    MHD_stop_daemon(d);
    const char *body = memmem(got, total, "\r\n\r\n", 4);
    cr_assert_not_null(body, "no end of head in %zu bytes", total);
    body += 4;
    json_error_t err;
    json_t *doc = json_loadb(body, total - (size_t)(body - got), 0, &err);
    cr_assert_not_null(doc, "body is not JSON: %s", err.text);
    cr_assert_eq(json_string_length(json_object_get(doc, "text")), text_len);
    json_decref(doc);
    free(got);
    return records;
}

Test(json_response, a_small_answer_is_one_send)
{
    int n = records_for(10 * 1024);
    cr_assert_eq(n, 1, "a 10 KiB answer came in %d sends", n);
}

Test(json_response, an_answer_with_a_streamed_string_under_64k_is_one_send)
{
    int n = records_for(40 * 1024);   /* over the 16 KiB a string needs to be escaped in place */
    cr_assert_eq(n, 1, "a 40 KiB answer came in %d sends", n);
}

Test(json_response, a_large_answer_is_still_streamed_in_blocks)
{
    int n = records_for(256 * 1024);
    cr_assert_geq(n, 1 + 256 / 32, "a 256 KiB answer came in %d sends", n);
}
