#include "bpf_run.h"

#include <string.h>

/* The kernel accepts at most BPF_MAXINSNS instructions and only forward
 * jumps, so a program that has not returned after that many steps is broken. */
#define MAX_STEPS BPF_MAXINSNS

static bool alu(uint32_t *a, uint16_t op, uint32_t v)
{
    switch (op) {
    case BPF_ADD: *a += v; return true;
    case BPF_SUB: *a -= v; return true;
    case BPF_MUL: *a *= v; return true;
    case BPF_DIV: if (!v) return false; *a /= v; return true;
    case BPF_MOD: if (!v) return false; *a %= v; return true;
    case BPF_AND: *a &= v; return true;
    case BPF_OR: *a |= v; return true;
    case BPF_XOR: *a ^= v; return true;
    case BPF_LSH: *a = v < 32 ? *a << v : 0; return true;
    case BPF_RSH: *a = v < 32 ? *a >> v : 0; return true;
    case BPF_NEG: *a = (uint32_t)-*a; return true;
    default: return false;
    }
}

/* The value a load of the given mode puts in a register; false if unknown. */
static bool load(const struct sock_filter *f, const struct seccomp_data *call, const uint32_t *mem, uint32_t *out)
{
    uint32_t k = f->k;
    switch (BPF_MODE(f->code)) {
    case BPF_ABS:
        if (BPF_SIZE(f->code) != BPF_W || k % 4 != 0 || k > sizeof *call - 4)
            return false;
        memcpy(out, (const char *)call + k, 4);
        return true;
    case BPF_IMM: *out = k; return true;
    case BPF_MEM: if (k >= BPF_MEMWORDS) return false; *out = mem[k]; return true;
    case BPF_LEN: *out = (uint32_t)sizeof *call; return true;
    default: return false;
    }
}

bpf_outcome bpf_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *call)
{
    bpf_outcome o = { 0 };
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
    size_t pc = 0;
    while (pc < n && o.steps < MAX_STEPS) {
        const struct sock_filter *f = &prog[pc++];
        o.steps++;
        uint32_t v = BPF_SRC(f->code) == BPF_X ? x : f->k;
        switch (BPF_CLASS(f->code)) {
        case BPF_LD:
            if (!load(f, call, mem, &a))
                return o;
            break;
        case BPF_LDX:
            if (BPF_MODE(f->code) == BPF_ABS || !load(f, call, mem, &x))
                return o;
            break;
        case BPF_ST:
        case BPF_STX:
            if (f->k >= BPF_MEMWORDS)
                return o;
            mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
            break;
        case BPF_ALU:
            if (!alu(&a, BPF_OP(f->code), v))
                return o;
            break;
        case BPF_JMP:
            switch (BPF_OP(f->code)) {
            case BPF_JA: pc += f->k; break;
            case BPF_JEQ: pc += a == v ? f->jt : f->jf; break;
            case BPF_JGT: pc += a > v ? f->jt : f->jf; break;
            case BPF_JGE: pc += a >= v ? f->jt : f->jf; break;
            case BPF_JSET: pc += (a & v) ? f->jt : f->jf; break;
            default: return o;
            }
            break;
        case BPF_RET:
            o.verdict = BPF_RVAL(f->code) == BPF_A ? a : f->k;
            o.ok = BPF_RVAL(f->code) != BPF_X;
            return o;
        case BPF_MISC:
            if (BPF_MISCOP(f->code) == BPF_TAX)
                x = a;
            else if (BPF_MISCOP(f->code) == BPF_TXA)
                a = x;
            else
                return o;
            break;
        default:
            return o;
        }
    }
    return o;
}
