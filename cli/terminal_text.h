/* Page text printed to a terminal (`verifetch lookup --text`): a page must
 * not be able to drive the terminal (OSC 52 clipboard writes, title
 * changes, screen clears, cursor moves). */
#ifndef VERIFETCH_TERMINAL_TEXT_H
#define VERIFETCH_TERMINAL_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..len) to f without C0 controls other than \n and \t, without
 * DEL and without C1 controls (U+0080..U+009F, and raw 0x80..0x9F bytes
 * that are not part of a UTF-8 sequence). */
void vf_terminal_write(FILE *f, const char *s, size_t len);

#endif
