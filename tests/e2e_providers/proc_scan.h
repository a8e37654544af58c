/* Searching every readable mapping of a live process's memory from outside
 * (tests run as root); the process tree and /proc files come from
 * tests/support/proc_inspect.h. No Criterion assertions in here: these run on
 * a helper thread while the lookup is in flight. */
#ifndef VERIFETCH_E2E_PROVIDERS_PROC_SCAN_H
#define VERIFETCH_E2E_PROVIDERS_PROC_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PS_MAX_NEEDLES 16

typedef struct {
    const char *bytes;
    size_t len;
} ps_needle;

typedef struct {
    uint64_t bytes_read;         /* memory actually read */
    uint64_t bytes_skipped;      /* readable mappings too large to read (sanitizer shadow) */
    size_t maps_read, maps_failed;
    bool found[PS_MAX_NEEDLES];  /* per needle */
    uintptr_t found_at[PS_MAX_NEEDLES];
    char found_map[PS_MAX_NEEDLES][96];   /* the mapping's perms and path */
} ps_mem_result;

/* Search all readable mappings of pid; -1 when /proc/<pid>/mem or maps cannot be opened. */
int ps_scan_memory(pid_t pid, const ps_needle *needles, size_t n, ps_mem_result *out);

#endif
