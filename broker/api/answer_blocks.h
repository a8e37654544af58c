/* How a JSON answer is cut up for sending (json_response.c). The benchmark's
 * floor writes its answers with the same figures, so that it does no more and
 * no less copying than the broker. */
#ifndef VERIFETCH_ANSWER_BLOCKS_H
#define VERIFETCH_ANSWER_BLOCKS_H

/* Strings this long are streamed; shorter ones are written inline. */
#define VF_ANSWER_HOLE_MIN (16u * 1024u)
/* What libmicrohttpd is given to send at a time. */
#define VF_ANSWER_BLOCK (32u * 1024u)
/* Answers up to this size are written whole into one buffer: libmicrohttpd
 * then sends head and body in one sendmsg(), where a streamed answer costs a
 * send for the head, a wake-up and a send per block. */
#define VF_ANSWER_WHOLE_MAX (64u * 1024u)

#endif
