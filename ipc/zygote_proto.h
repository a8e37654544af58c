/* Broker <-> zygote control protocol. Fixed-size messages on AF_UNIX
 * SOCK_SEQPACKET sockets (one sendmsg = one message, so broker threads can
 * share the control socket without a lock), descriptors via SCM_RIGHTS.
 *
 * Start: the broker spawns the worker executable with argv {"verifetch-worker",
 * "--zygote", "<pool size>", "shared"|"private"}, an empty environment, fd 3 =
 * control socket and, optionally, fd 4 = a sealed memfd holding the PEM CA
 * bundle. The zygote warms up, parses the CA, compiles the seccomp program,
 * drops root, sets up namespaces, and sends HELLO (followed by the program's
 * bytes in the same message) or REFUSED.
 *
 * Workers: the zygote forks workers ahead of need and announces each with
 * READY (pid) carrying three descriptors: [0] the broker's end of the worker's
 * job socket (the worker's fd 3, SOCK_STREAM, the usual job/result frames),
 * [1] a pidfd, [2] the broker's end of the worker's status channel. It keeps
 * POOL (at least one) announced workers unclaimed, forking the next as soon as
 * one is claimed; a broker that finds none waits for the next READY.
 * The broker claims a worker by sending CLAIMED on its status channel, with
 * the time the worker may still take (the zygote then forks a replacement),
 * may read EXITED (the wait status) there, and closes it when done. The zygote
 * SIGKILLs a claimed worker that outlives its time, and always reaps it; an
 * unclaimed one whose channel closes is killed at once. The broker itself
 * never waits on the zygote for a fetch. When the control socket closes, the zygote kills every worker and
 * exits.
 *
 * Retirement (a fresh zygote, and so a fresh address-space layout, has taken
 * over): the broker sends DRAIN on the control socket. The zygote forks no
 * more workers; the broker closes the status channel of every READY it still
 * finds queued (the zygote kills those unclaimed workers), claimed workers
 * run to their end or their time, and the zygote exits once none is left. */
#ifndef VERIFETCH_WORKER_ZYGOTE_PROTO_H
#define VERIFETCH_WORKER_ZYGOTE_PROTO_H

#include <stdint.h>

#define VF_ZY_MAGIC 0x767a7932u   /* "vzy2" */
#define VF_ZY_CTL_FD 3
#define VF_ZY_CA_FD 4
#define VF_ZY_USERNS_FD 5   /* optional: the broker's mapped user namespace (worker/sandbox/broker_userns.h) */
#define VF_ZY_DETAIL 192
#define VF_ZY_MAX_POOL 64u
#define VF_ZY_MAX_CA (8u * 1024u * 1024u)

enum {
    VF_ZY_HELLO = 1,    /* zygote -> broker, control socket, once */
    VF_ZY_READY = 3,    /* zygote -> broker, control socket, fds [job socket, pidfd, status] */
    VF_ZY_CLAIMED = 4,  /* broker -> zygote, status channel */
    VF_ZY_EXITED = 5,   /* zygote -> broker, status channel */
    VF_ZY_REFUSED = 6,  /* zygote -> broker, control socket: detail says why */
    VF_ZY_DRAIN = 7,    /* broker -> zygote, control socket: fork no more, exit when no worker is left */
};

typedef struct {
    uint32_t magic;
    uint32_t op;
    int32_t pid;        /* READY, EXITED: the worker's pid as the broker sees it */
    int32_t wstatus;    /* EXITED: waitpid()-style status */
    uint32_t layers;    /* HELLO: VF_LAYER_* every worker gets from the zygote */
    uint32_t bpf_len;   /* HELLO: bytes of seccomp program following this header */
    uint32_t pool;      /* HELLO: workers kept forked and ready */
    uint32_t ca_certs;  /* HELLO: certificates in the parsed CA (0: none given) */
    uint32_t kill_after_ms; /* CLAIMED: SIGKILL the worker if it still runs after this */
    uint32_t killed_at_deadline; /* EXITED: 1 when the zygote killed it at that time */
    char detail[VF_ZY_DETAIL]; /* HELLO/REFUSED: NUL-terminated reason or summary */
} vf_zy_msg;

#endif
