#include "worker/content/attr_store.h"

#include <string.h>
#include <strings.h>

size_t vf_attr_run_size(const char *const *pairs)
{
    if (!pairs || !pairs[0])
        return 0;
    size_t need = 1; /* the closing empty name */
    for (size_t i = 0; pairs[i]; i += 2)
        need += strlen(pairs[i]) + 1 + (pairs[i + 1] ? strlen(pairs[i + 1]) : 0) + 1;
    return need;
}

void vf_attr_run_write(char *dst, const char *const *pairs)
{
    for (size_t i = 0; pairs[i]; i += 2) {
        for (int part = 0; part < 2; part++) {
            const char *s = pairs[i + part] ? pairs[i + part] : "";
            size_t n = strlen(s) + 1;
            memcpy(dst, s, n);
            dst += n;
        }
    }
    *dst = '\0';
}

const char *vf_attr_find(const char *run, const char *name)
{
    if (!run)
        return NULL;
    while (*run) {
        const char *value = run + strlen(run) + 1;
        if (strcasecmp(run, name) == 0)
            return value;
        run = value + strlen(value) + 1;
    }
    return NULL;
}
