/* robots.txt rules as RFC 9309 reads them (broker/lookup/robots_rules.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/lookup/robots_rules.h"

static bool allows(const char *txt, const char *token, const char *path)
{
    char rule[256];
    return vf_robots_allows(txt, strlen(txt), token, path, rule, sizeof rule);
}

Test(robots_rules, product_token_is_the_name_before_the_version)
{
    char tok[64];
    vf_robots_product_token("Verifetch/0.1.0 (+https://x)", tok, sizeof tok);
    cr_assert_str_eq(tok, "verifetch");
    vf_robots_product_token("StrictBot", tok, sizeof tok);
    cr_assert_str_eq(tok, "strictbot");
}

Test(robots_rules, longest_match_wins_and_allow_wins_a_tie)
{
    const char *txt = "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\nAllow: /x\nDisallow: /x\n";
    cr_assert_not(allows(txt, "bot", "/a/z"));
    cr_assert(allows(txt, "bot", "/a/b/z"));
    cr_assert_not(allows(txt, "bot", "/a/b/c?q=1"));
    cr_assert(allows(txt, "bot", "/x"), "equal length: allow wins");
    cr_assert(allows(txt, "bot", "/other"));
    char rule[256];
    vf_robots_allows(txt, strlen(txt), "bot", "/a/b/c", rule, sizeof rule);
    cr_assert_str_eq(rule, "Disallow: /a/b/c");
}

Test(robots_rules, wildcards_and_end_anchor)
{
    const char *txt = "user-agent: *\ndisallow: /*.pdf$\ndisallow: /*?session=\n";
    cr_assert_not(allows(txt, "bot", "/docs/a.pdf"));
    cr_assert(allows(txt, "bot", "/docs/a.pdf?x=1"), "$ anchors at the end");
    cr_assert_not(allows(txt, "bot", "/p?a=1&x=2?session=3"));
    cr_assert_not(allows(txt, "bot", "/p?session=2"));
    cr_assert(allows(txt, "bot", "/p?a=1"));
}

Test(robots_rules, our_group_replaces_star_and_groups_share_lines)
{
    const char *txt = "User-agent: *\nDisallow: /\n\nUser-agent: other\nUser-agent: MyBot # comment\nAllow: /\n"
                      "Disallow: /private\nSitemap: https://x/sitemap.xml\nUser-agent: third\nDisallow: /pub\n";
    cr_assert(allows(txt, "mybot", "/pub"), "our group, not *, and not the next group");
    cr_assert_not(allows(txt, "mybot", "/private/1"));
    cr_assert_not(allows(txt, "somebot", "/pub"), "no group of its own: * applies");
    cr_assert(allows(txt, "somebot", "/robots.txt"), "robots.txt itself is always allowed");
}

Test(robots_rules, empty_disallow_and_no_rules_allow_everything)
{
    cr_assert(allows("User-agent: *\nDisallow:\n", "bot", "/anything"));
    cr_assert(allows("", "bot", "/anything"));
    cr_assert(allows("garbage without colons\n\x01\x02", "bot", "/anything"));
}

/* A hostile pattern cannot make matching exponential. */
Test(robots_rules, pathological_pattern_is_fast)
{
    char txt[512] = "User-agent: *\nDisallow: /";
    for (int i = 0; i < 60; i++)
        strcat(txt, "*a");
    strcat(txt, "b\n");
    char path[4097];
    path[0] = '/';
    memset(path + 1, 'a', sizeof path - 2);
    path[sizeof path - 1] = '\0';
    clock_t start = clock();
    cr_assert(allows(txt, "bot", path));
    cr_assert_lt((double)(clock() - start) / CLOCKS_PER_SEC, 1.0, "matching took too long");
}
