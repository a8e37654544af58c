/* New user/pid/net/ipc/mount namespaces for a worker, where the kernel allows.
 * An exec'd worker unshares user/net/ipc/mount by itself (a pid namespace
 * would need one more fork). A zygote either enters user/net/ipc/mount
 * namespaces once, for itself and every worker it forks, and gives each worker
 * a pid namespace of its own at clone() time ("shared", the default: a fresh
 * network namespace costs ~0.5 ms to build and as much to tear down), or
 * clones every worker into five new ones ("private"). An empty network
 * namespace still lets the socket the broker passed work. */
#ifndef VERIFETCH_WORKER_NAMESPACES_H
#define VERIFETCH_WORKER_NAMESPACES_H

#include <stdbool.h>
#include <stdint.h>

/* The VF_LAYER_* bits that a set of CLONE_NEW* flags stands for. */
uint32_t vf_ns_layers(unsigned long clone_flags);

/* Exec'd worker: unshares user+net+ipc+mount, or the largest subset the kernel
 * grants; without user when new_user is false (it joined the broker's mapped
 * one, worker/sandbox/broker_userns.h). Returns the layers applied (0 when
 * none). */
uint32_t vf_ns_unshare(bool new_user);

/* Zygote: the largest subset of wanted (CLONE_NEW* flags) a child of this
 * process can be created with, found by trying (each try is one short-lived
 * child). 0 when none. */
unsigned long vf_ns_probe_clone_flags(unsigned long wanted);

/* fork() with extra clone flags; the child returns 0 (no new stack: it runs
 * on a copy of ours, as after fork). Only for a single-threaded caller: glibc's
 * fork handlers do not run. */
long vf_ns_clone(unsigned long clone_flags);

#endif
