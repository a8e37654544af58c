#include "proc_scan.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PS_CHUNK (1u << 20)
/* ASan/UBSan builds reserve terabytes of shadow as one readable mapping that is
 * almost all untouched; a key cannot hide there, and reading it would take hours. */
#define PS_MAX_MAPPING (1ull << 30)

static void search(const char *buf, size_t len, uint64_t base, const ps_needle *needles,
                   size_t n, ps_mem_result *out, const char *map)
{
    for (size_t i = 0; i < n; i++) {
        if (out->found[i] || needles[i].len == 0)
            continue;
        const char *hit = memmem(buf, len, needles[i].bytes, needles[i].len);
        if (hit) {
            out->found[i] = true;
            out->found_at[i] = (uintptr_t)(base + (uint64_t)(hit - buf));
            snprintf(out->found_map[i], sizeof out->found_map[i], "%s", map);
        }
    }
}

/* Read one mapping in chunks; consecutive chunks overlap by the longest
 * needle minus one, so a value straddling a boundary is still found. */
static void scan_mapping(int mem, uint64_t start, uint64_t end, size_t overlap, char *buf,
                         const ps_needle *needles, size_t n, ps_mem_result *out, const char *map)
{
    size_t carried = 0;
    uint64_t at = start;
    bool failed = false;
    while (at < end) {
        size_t want = (size_t)(end - at < PS_CHUNK ? end - at : PS_CHUNK);
        ssize_t got = pread(mem, buf + carried, want, (off_t)at);
        if (got <= 0) {
            failed = true;
            break;
        }
        out->bytes_read += (uint64_t)got;
        size_t have = carried + (size_t)got;
        search(buf, have, at - carried, needles, n, out, map);
        at += (uint64_t)got;
        carried = have < overlap ? have : overlap;
        memmove(buf, buf + have - carried, carried);
    }
    if (failed && at == start)
        out->maps_failed++;
    else
        out->maps_read++;
}

int ps_scan_memory(pid_t pid, const ps_needle *needles, size_t n, ps_mem_result *out)
{
    memset(out, 0, sizeof *out);
    if (n > PS_MAX_NEEDLES)
        return -1;
    size_t overlap = 0;
    for (size_t i = 0; i < n; i++)
        if (needles[i].len > overlap + 1)
            overlap = needles[i].len - 1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "re");
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int mem = open(path, O_RDONLY | O_CLOEXEC);
    char *buf = malloc(PS_CHUNK + overlap);
    if (!maps || mem < 0 || !buf) {
        if (maps)
            fclose(maps);
        if (mem >= 0)
            close(mem);
        free(buf);
        return -1;
    }
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, maps)) {
        uint64_t start, end;
        char perms[8] = "";
        int name_at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %n", &start, &end, perms,
                   &name_at) < 3 || perms[0] != 'r')
            continue;
        char map[96];
        snprintf(map, sizeof map, "%s %.80s", perms, name_at > 0 ? line + name_at : "");
        map[strcspn(map, "\n")] = '\0';
        if (end - start > PS_MAX_MAPPING) {
            out->bytes_skipped += end - start;
            continue;
        }
        scan_mapping(mem, start, end, overlap, buf, needles, n, out, map);
    }
    fclose(maps);
    close(mem);
    free(buf);
    return 0;
}
