/* The worker and the broker are linked with full RELRO (-z relro -z now):
 * every symbol is bound when the zygote starts, so a forked worker neither
 * resolves symbols lazily (copy-on-write faults in every worker) nor keeps a
 * writable table of function pointers a memory bug could redirect. Read
 * from the binaries' own ELF headers. */
#include <criterion/criterion.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    bool relro_segment;
    bool bind_now;
} elf_hardening;

static elf_hardening read_hardening(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0, "open %s", path);
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_assert_gt((size_t)st.st_size, sizeof(Elf64_Ehdr));
    const unsigned char *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    cr_assert_neq(img, MAP_FAILED);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    cr_assert(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64, "%s: not ELF64", path);
    cr_assert_leq(eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr), (size_t)st.st_size);
    elf_hardening h = { 0 };
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_GNU_RELRO)
            h.relro_segment = true;
        if (ph[i].p_type != PT_DYNAMIC)
            continue;
        cr_assert_leq(ph[i].p_offset + ph[i].p_filesz, (size_t)st.st_size);
        const Elf64_Dyn *d = (const Elf64_Dyn *)(img + ph[i].p_offset);
        for (size_t k = 0; k < ph[i].p_filesz / sizeof *d && d[k].d_tag != DT_NULL; k++) {
            if (d[k].d_tag == DT_BIND_NOW || (d[k].d_tag == DT_FLAGS && (d[k].d_un.d_val & DF_BIND_NOW)) ||
                (d[k].d_tag == DT_FLAGS_1 && (d[k].d_un.d_val & DF_1_NOW)))
                h.bind_now = true;
        }
    }
    munmap((void *)img, (size_t)st.st_size);
    return h;
}

static void expect_full_relro(const char *relative)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", getenv("VERIFETCH_BUILD_ROOT"), relative);
    elf_hardening h = read_hardening(path);
    cr_expect(h.relro_segment, "%s has no PT_GNU_RELRO segment", path);
    cr_expect(h.bind_now, "%s binds symbols lazily (no BIND_NOW)", path);
}

Test(relro, worker_is_linked_with_full_relro)
{
    expect_full_relro("worker/verifetch-worker");
}

Test(relro, broker_is_linked_with_full_relro)
{
    expect_full_relro("broker/verifetchd");
}
