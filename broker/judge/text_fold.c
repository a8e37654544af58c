/* Folding through utf8proc: one call does NFKC + case folding + lumping,
 * a custom map adds the quotes utf8proc does not lump, and a last pass
 * collapses whitespace. Invalid input is repaired first because utf8proc
 * refuses it whole. */
#include "broker/judge/text_fold.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* Quotes and dashes, whatever UTF8PROC_LUMP does with them in this version. */
static utf8proc_int32_t fold_punct(utf8proc_int32_t cp, void *data)
{
    (void)data;
    switch (cp) {
    case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: case 0x2039: case 0x203A:
    case 0x275B: case 0x275C: case 0x300C: case 0x300D: case 0xFF07:
        return '\'';
    case 0x00AB: case 0x00BB: case 0x201C: case 0x201D: case 0x201E: case 0x201F: case 0x2033:
    case 0x275D: case 0x275E: case 0x300E: case 0x300F: case 0xFF02:
        return '"';
    case 0x2E17: case 0x2E3A: case 0x2E3B: case 0xFE58:
        return '-';
    default:
        return cp;
    }
}

/* Copy with every invalid sequence replaced by U+FFFD (utf8proc_map
 * rejects the whole string otherwise). */
static uint8_t *repair_utf8(const char *s, size_t len, size_t *out_len)
{
    uint8_t *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    while (i < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate((const uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n <= 0 || cp == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3); /* NUL too: utf8proc would stop there */
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, s + i, (size_t)n);
        o += (size_t)n;
        i += (size_t)n;
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

char *vf_fold_text(const char *s, size_t len, size_t *out_len)
{
    size_t fixed_len = 0;
    uint8_t *fixed = repair_utf8(s ? s : "", s ? len : 0, &fixed_len);
    if (!fixed)
        return NULL;
    uint8_t *mapped = NULL;
    utf8proc_ssize_t n = utf8proc_map_custom(
        fixed, (utf8proc_ssize_t)fixed_len, &mapped,
        UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE |
            UTF8PROC_LUMP | UTF8PROC_STRIPCC,
        fold_punct, NULL);
    free(fixed);
    if (n < 0)
        return NULL; /* only UTF8PROC_ERROR_NOMEM is left once the input is valid */
    /* LUMP turned every space character into ' ' and STRIPCC every line
     * break and tab; collapse the runs and trim. */
    size_t o = 0;
    int pending_space = 0;
    for (utf8proc_ssize_t i = 0; i < n; i++) {
        uint8_t ch = mapped[i];
        if (ch == ' ') {
            pending_space = o > 0;
            continue;
        }
        if (pending_space)
            mapped[o++] = ' ';
        pending_space = 0;
        mapped[o++] = ch;
    }
    mapped[o] = '\0';
    if (out_len)
        *out_len = o;
    return (char *)mapped;
}
