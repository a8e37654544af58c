#include "worker/sandbox/stack_canary.h"

#include <stdint.h>
#include <sys/random.h>

/* glibc on x86-64 keeps the canary in the thread control block at %fs:0x28,
 * where the compiler's prologues and epilogues read it. */
#if defined(__x86_64__) && defined(__GLIBC__)
#define CANARY_IN_TCB 1
#endif

unsigned long vf_stack_canary_read(void)
{
#ifdef CANARY_IN_TCB
    unsigned long c;
    __asm__ volatile("movq %%fs:0x28, %0" : "=r"(c));
    return c;
#else
    return 0;
#endif
}

/* This function's own frame must not be checked: it starts with the old
 * canary and ends with the new one. */
#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define NO_CANARY __attribute__((no_stack_protector))
#endif
#endif
#ifndef NO_CANARY
#define NO_CANARY __attribute__((optimize("no-stack-protector")))
#endif

NO_CANARY bool vf_stack_canary_renew(void)
{
#ifdef CANARY_IN_TCB
    unsigned long c = 0;
    if (getrandom(&c, sizeof c, 0) != (ssize_t)sizeof c)
        return false;
    c &= ~0xFFul; /* glibc's low zero byte stops a string overflow from copying the canary out */
    __asm__ volatile("movq %0, %%fs:0x28" : : "r"(c) : "memory");
    return true;
#else
    return false;
#endif
}
