/* HTML5 named character references. libxml2's HTML parser knows HTML4's 253
 * and leaves the other ~1,900 (&NotEqualTilde;, &hearts; is fine, &bigstar;
 * is not) as raw text; this pass rewrites those before parsing. */
#ifndef VERIFETCH_WORKER_ENTITIES_H
#define VERIFETCH_WORKER_ENTITIES_H

#include <stdbool.h>
#include <stddef.h>

/* Returns a malloc'd rewritten copy of utf8 (*out_len set), or NULL when
 * nothing needed rewriting (*oom false) or memory ran out (*oom true). The
 * copy is at most a fifth longer than the input. */
char *vf_html5_entities_rewrite(const char *utf8, size_t len, size_t *out_len, bool *oom);

#endif
