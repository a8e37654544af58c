#include "proc_peak.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long proc_status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "re");
    cr_assert_not_null(f);
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':')
            v = atol(line + k + 1);
    fclose(f);
    return v;
}

void proc_reset_peak(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "5", 1), 1);
    close(fd);
}
