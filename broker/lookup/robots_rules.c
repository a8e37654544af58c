#include "broker/lookup/robots_rules.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void vf_robots_product_token(const char *user_agent, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = user_agent; *p && *p != '/' && *p != ' ' && n + 1 < len; p++)
        out[n++] = (char)tolower((unsigned char)*p);
    out[n] = '\0';
}

/* Does pattern [p, p+pn) match the start of s ("*" any run, a final "$" the
 * end)? Greedy with one backtrack point: O(len(p) * len(s)), whatever the
 * site writes. */
static bool pattern_matches(const char *p, size_t pn, const char *s)
{
    bool anchored = pn > 0 && p[pn - 1] == '$';
    if (anchored)
        pn--;
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    for (;;) {
        if (pi == pn && (!anchored || !s[si]))
            return true;
        if (pi < pn && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (pi < pn && s[si] && p[pi] == s[si]) {
            pi++;
            si++;
        } else if (star != (size_t)-1 && s[mark]) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
}

typedef struct {
    const char *token;
    const char *path;
    bool in_group_header;   /* the last line was user-agent: more may follow */
    bool group_ours;        /* the current group names our token */
    bool group_star;        /* the current group names "*" */
    bool saw_ours;          /* some group names our token: "*" groups no longer count */
    /* best match so far, for our groups and for "*" groups */
    long best_len[2];
    bool best_allow[2];
    char best_rule[2][256];
} robots_scan;

static void consider(robots_scan *r, int which, bool allow, const char *v, size_t vn)
{
    if (vn == 0 || !pattern_matches(v, vn, r->path))
        return;   /* an empty disallow allows everything: no rule */
    long len = (long)vn;
    if (len > r->best_len[which] || (len == r->best_len[which] && allow && !r->best_allow[which])) {
        r->best_len[which] = len;
        r->best_allow[which] = allow;
        snprintf(r->best_rule[which], sizeof r->best_rule[which], "%s: %.*s", allow ? "Allow" : "Disallow",
                 (int)(vn < 200 ? vn : 200), v);
    }
}

static void line(robots_scan *r, const char *k, size_t kn, const char *v, size_t vn)
{
    if (kn == 10 && strncasecmp(k, "user-agent", 10) == 0) {
        if (!r->in_group_header)
            r->group_ours = r->group_star = false;
        r->in_group_header = true;
        if (vn == 1 && *v == '*')
            r->group_star = true;
        else if (vn == strlen(r->token) && strncasecmp(v, r->token, vn) == 0)
            r->group_ours = r->saw_ours = true;
        return;
    }
    bool allow = kn == 5 && strncasecmp(k, "allow", 5) == 0;
    bool disallow = kn == 8 && strncasecmp(k, "disallow", 8) == 0;
    if (!allow && !disallow)
        return;   /* sitemap, crawl-delay and the like end no group */
    r->in_group_header = false;
    if (r->group_ours)
        consider(r, 0, allow, v, vn);
    if (r->group_star)
        consider(r, 1, allow, v, vn);
}

static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s))
        (*s)++, (*n)--;
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

bool vf_robots_allows(const char *text, size_t len, const char *token, const char *path_query,
                      char *rule, size_t rule_len)
{
    rule[0] = '\0';
    if (strcmp(path_query, "/robots.txt") == 0)
        return true;
    robots_scan r = { .token = token, .path = path_query, .best_len = { -1, -1 } };
    if (len > VF_ROBOTS_MAX_BYTES)
        len = VF_ROBOTS_MAX_BYTES;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
        const char *hash = memchr(p, '#', n);
        size_t body = hash ? (size_t)(hash - p) : n;
        const char *colon = memchr(p, ':', body);
        if (colon) {
            const char *k = p, *v = colon + 1;
            size_t kn = (size_t)(colon - p), vn = body - kn - 1;
            trim(&k, &kn);
            trim(&v, &vn);
            line(&r, k, kn, v, vn);
        }
        p += n + 1;
    }
    int which = r.saw_ours ? 0 : 1;
    if (r.best_len[which] < 0)
        return true;
    snprintf(rule, rule_len, "%s", r.best_rule[which]);
    return r.best_allow[which];
}
