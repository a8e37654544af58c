/* `verifetch lookup --text` prints page text without terminal controls
 * (issue 13 item 10): OSC 52, title, clear-screen and C1 sequences lose
 * their introducers; \n, \t and other UTF-8 text pass. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/terminal_text.h"

static char *through(const char *in, size_t len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert_not_null(f);
    vf_terminal_write(f, in, len);
    fclose(f);
    return buf;
}

Test(terminal_text, escapes_lose_their_introducers)
{
    const char in[] = "a\x1b]52;c;ZWNobw==\x07" "b\x1b[2J\x1b[H" "c\xc2\x9b" "2J\x9b" "d\x7f\r\x08" "e";
    char *out = through(in, sizeof in - 1);
    cr_assert_str_eq(out, "a]52;c;ZWNobw==b[2J[Hc2Jde");
    free(out);
}

Test(terminal_text, text_newlines_tabs_and_utf8_pass)
{
    const char in[] = "caf\xc3\xa9\tn\xc2\xa0" "b\n\xe6\x97\xa5\xf0\x9f\x98\x80";
    char *out = through(in, sizeof in - 1);
    cr_assert_str_eq(out, in);
    free(out);
}
