/* The allowlist every worker installs is libseccomp's binary tree of the
 * rules (worker/sandbox/seccomp_filter.c). Run in user space (bpf_run.c)
 * over every system call number, for this and a foreign architecture, with
 * the argument values the rules compare against, it must decide exactly as
 * the same rules in libseccomp's listed layout, for both variants; and its
 * verdicts must take few steps, the reason for the tree (the kernel runs
 * the program for every call number each time a worker installs it). */
#include <criterion/criterion.h>
#include <linux/audit.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_run.h"
#include "worker/sandbox/seccomp_filter.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define FOREIGN_ARCH AUDIT_ARCH_I386
#define X32_BIT 0x40000000u   /* x32 calls share the arch, numbered from here */
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define FOREIGN_ARCH AUDIT_ARCH_ARM
#define X32_BIT 0u
#else
#error "test_seccomp_layout.c: add this architecture's AUDIT_ARCH_* values"
#endif

#define NR_MAX 1024u          /* beyond every call number of both architectures */
#define POOL_MAX 256

typedef struct {
    struct sock_filter *code;
    size_t n;
} program;

static program export(vf_seccomp_variant variant, bool tree)
{
    void *prog = NULL;
    size_t len = 0;
    char err[256] = "";
    int rc = tree ? vf_seccomp_export(variant, &prog, &len, err, sizeof err)
                  : vf_seccomp_export_listed(variant, &prog, &len, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    return (program){ prog, len / sizeof(struct sock_filter) };
}

/* Every constant either program compares or masks with, and its neighbours:
 * the values at which a rule's answer can change. */
static size_t constants(const program *p, size_t np, uint32_t *pool)
{
    size_t n = 0;
    pool[n++] = 0;
    pool[n++] = 0xffffffffu;
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < p[i].n; j++) {
            const struct sock_filter *f = &p[i].code[j];
            bool compares = BPF_CLASS(f->code) == BPF_JMP && BPF_OP(f->code) != BPF_JA;
            bool masks = BPF_CLASS(f->code) == BPF_ALU;
            if (!(compares || masks) || BPF_SRC(f->code) != BPF_K)
                continue;
            const uint32_t near[] = { f->k, f->k + 1, f->k - 1 };
            for (size_t k = 0; k < 3; k++) {
                bool seen = false;
                for (size_t m = 0; m < n && !seen; m++)
                    seen = pool[m] == near[k];
                if (!seen && n < POOL_MAX)
                    pool[n++] = near[k];
            }
        }
    return n;
}

static uint32_t decide(const program *p, const struct seccomp_data *call, unsigned *steps)
{
    bpf_outcome o = bpf_run(p->code, p->n, call);
    cr_assert(o.ok, "the program did not return for call %d (arch 0x%x)", call->nr, call->arch);
    if (steps)
        *steps = o.steps;
    return o.verdict;
}

/* Both programs decide call alike; *sensitive is set when the tree's
 * verdict differs from plain (the same call number, arguments zero). */
static void assert_same(const program *tree, const program *listed, const struct seccomp_data *call,
                        uint32_t plain, bool *sensitive)
{
    uint32_t t = decide(tree, call, NULL), l = decide(listed, call, NULL);
    cr_assert_eq(t, l,
                 "call %d (arch 0x%x, args %llx %llx %llx %llx %llx %llx): tree says 0x%x, list says 0x%x",
                 call->nr, call->arch, (unsigned long long)call->args[0], (unsigned long long)call->args[1],
                 (unsigned long long)call->args[2], (unsigned long long)call->args[3],
                 (unsigned long long)call->args[4], (unsigned long long)call->args[5], t, l);
    *sensitive = *sensitive || t != plain;
}

static void assert_layouts_agree(vf_seccomp_variant variant)
{
    program p[2] = { export(variant, true), export(variant, false) };
    uint32_t pool[POOL_MAX];
    size_t n_pool = constants(p, 2, pool);
    const uint32_t arches[] = { NATIVE_ARCH, FOREIGN_ARCH };
    size_t compared = 0, pair_checked = 0;
    for (size_t a = 0; a < sizeof arches / sizeof arches[0]; a++)
        for (uint32_t base = 0; base <= X32_BIT; base += X32_BIT ? X32_BIT : 1) {
            for (uint32_t nr = 0; nr < NR_MAX; nr++) {
                struct seccomp_data call = { .nr = (int)(base + nr), .arch = arches[a] };
                uint32_t plain = decide(&p[0], &call, NULL);
                bool sensitive = false;
                assert_same(&p[0], &p[1], &call, plain, &sensitive);
                /* One argument at a time, in its low and its high half. */
                for (int i = 0; i < 6; i++)
                    for (size_t v = 0; v < n_pool; v++)
                        for (int half = 0; half < 2; half++) {
                            struct seccomp_data c = call;
                            c.args[i] = half ? (uint64_t)pool[v] << 32 : pool[v];
                            assert_same(&p[0], &p[1], &c, plain, &sensitive);
                            compared++;
                        }
                /* Rules test two arguments at most: every pair of values
                 * for every pair of arguments, where arguments matter. */
                for (int i = 0; sensitive && i < 6; i++)
                    for (int j = i + 1; j < 6; j++)
                        for (size_t v = 0; v < n_pool; v++)
                            for (size_t w = 0; w < n_pool; w++) {
                                struct seccomp_data c = call;
                                c.args[i] = pool[v];
                                c.args[j] = pool[w];
                                assert_same(&p[0], &p[1], &c, plain, &sensitive);
                                pair_checked++;
                            }
            }
            if (!X32_BIT)
                break;
        }
    cr_log_info("variant %d: %zu single-argument calls and %zu argument pairs agree (%zu constants)", variant,
                compared, pair_checked, n_pool);
    cr_assert_gt(pair_checked, 0, "no call's verdict depended on its arguments: the pool missed the rules' values");
    free(p[0].code);
    free(p[1].code);
}

Test(seccomp_layout, the_tree_decides_every_call_as_the_listed_rules_do)
{
    assert_layouts_agree(VF_SECCOMP_AFTER_JOB);
    assert_layouts_agree(VF_SECCOMP_BEFORE_JOB);
}

/* The steps to a verdict over every call number of this architecture
 * (arguments zero): what the kernel's allow cache runs through at each
 * install. Their sum and the longest. */
static unsigned path_steps(const program *p, unsigned *longest)
{
    unsigned total = 0;
    *longest = 0;
    for (uint32_t nr = 0; nr < NR_MAX; nr++) {
        unsigned steps = 0;
        decide(p, &(struct seccomp_data){ .nr = (int)nr, .arch = NATIVE_ARCH }, &steps);
        total += steps;
        if (steps > *longest)
            *longest = steps;
    }
    return total;
}

Test(seccomp_layout, every_verdict_takes_few_steps)
{
    program tree = export(VF_SECCOMP_BEFORE_JOB, true), listed = export(VF_SECCOMP_BEFORE_JOB, false);
    unsigned tree_longest, listed_longest;
    unsigned t = path_steps(&tree, &tree_longest), l = path_steps(&listed, &listed_longest);
    cr_log_info("steps over %u call numbers: tree %u (longest %u), listed %u (longest %u)", NR_MAX, t,
                tree_longest, l, listed_longest);
    cr_assert_leq(tree_longest, 24, "a verdict takes %u steps (the listed rules: %u)", tree_longest, listed_longest);
    cr_assert_leq(2 * t, l, "the tree's %u steps over every call number are not half the list's %u", t, l);
    free(tree.code);
    free(listed.code);
}
