/* One hex digit's value: shared by the config's token parser and the
 * broker's redaction, which decode hex in keys, URLs and escapes. */
#ifndef VERIFETCH_HEX_DIGIT_H
#define VERIFETCH_HEX_DIGIT_H

/* 0..15, or -1 for anything that is not a hex digit (either case). */
static inline int vf_hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

#endif
