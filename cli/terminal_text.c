#include "cli/terminal_text.h"

static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char b = s[0];
    size_t need = b >= 0xC2 && b <= 0xDF ? 1 : b >= 0xE0 && b <= 0xEF ? 2 : b >= 0xF0 && b <= 0xF4 ? 3 : 0;
    if (need == 0 || n - 1 < need)
        return 0;
    for (size_t k = 1; k <= need; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    return need + 1;
}

void vf_terminal_write(FILE *f, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned char b = s[i];
        if (b < 0x80) {
            if (b >= 0x20 ? b != 0x7F : b == '\n' || b == '\t')
                fputc(b, f);
            i++;
            continue;
        }
        size_t n = utf8_len(s + i, len - i);
        if (n == 0) { /* a stray byte: 8-bit terminals read 0x80..0x9F as C1 */
            i++;
            continue;
        }
        if (!(n == 2 && b == 0xC2 && s[i + 1] <= 0x9F)) /* U+0080..U+009F are C1 */
            fwrite(s + i, 1, n, f);
        i += n;
    }
}
