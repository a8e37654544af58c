#include "bench_page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *bench_page_body(size_t len, bool html)
{
    static const char *words[] = { "river", "stone", "garden", "window", "letter", "morning",
                                   "harbour", "lantern", "orchard", "meadow", "kettle", "pencil" };
    char *b = malloc(len + 1);
    if (!b)
        return NULL;
    const char *head = html ? "<!doctype html><html><head><title>bench page</title></head><body>\n" : "";
    const char *tail = html ? "</body></html>\n" : "\n";
    size_t pos = (size_t)snprintf(b, len + 1, "%s", head);
    size_t tail_len = strlen(tail);
    unsigned n = 0;
    while (pos + tail_len < len) {
        char para[256];
        int w = snprintf(para, sizeof para, "%sParagraph %u: the %s by the %s holds a %s and a %s.%s\n",
                         html ? "<p>" : "", n, words[n % 12], words[(n * 7 + 3) % 12],
                         words[(n * 5 + 1) % 12], words[(n * 11 + 2) % 12], html ? "</p>" : "");
        n++;
        size_t room = len - tail_len - pos;
        size_t take = (size_t)w < room ? (size_t)w : room;
        memcpy(b + pos, para, take);
        pos += take;
    }
    /* The last paragraph is cut to fit; the closing tags still end the page. */
    memcpy(b + len - tail_len, tail, tail_len);
    b[len] = '\0';
    return b;
}
