#include "worker/content/content_hints.h"

#include <string.h>

#include "worker/content/dom_util.h"

/* class/id words that pull a block toward or away from being the content. */
static const char *const positive_hints[] = {
    "article", "body", "content", "entry", "hentry", "main", "page", "post", "text", "blog",
    "story", "prose", "markdown", NULL,
};
static const char *const negative_hints[] = {
    "hidden", "banner", "combx", "comment", "com-", "contact", "foot", "footnote", "masthead",
    "media", "meta", "outbrain", "taboola", "promo", "related", "scroll", "share", "social",
    "shoutbox", "sidebar", "skyscraper", "sponsor", "shopping", "tags", "tool", "widget",
    "newsletter", "subscribe", "recommend", "byline", "author", "breadcrumb", "nav", "menu",
    NULL,
};
/* Blocks so named are set aside on the first attempt, unless they also look like content. */
static const char *const unlikely_hints[] = {
    "-ad-", "ad-break", "agegate", "banner", "breadcrumb", "combx", "comment", "community",
    "cover-wrap", "disqus", "extra", "footer", "gdpr", "header", "legends", "menu", "related",
    "remark", "replies", "rss", "shoutbox", "sidebar", "skyscraper", "social", "sponsor",
    "supplemental", "pagination", "pager", "popup", "newsletter", "share", "recirc", NULL,
};
/* Blocks next to the article text that are about it, not of it: the
 * standfirst, the byline, disclosures, the author's box, sign-ups. */
static const char *const beside_hints[] = {
    "abstract", "byline", "dateline", "standfirst", "dek", "subtitle", "summary", "disclos",
    "disclaim", "author", "bio", "newsletter", "signup", "sign-up", "subscribe", "share",
    "social", "caption", "credit", "meta", NULL,
};
static const char *const credit_hints[] = {
    "byline", "dateline", "timestamp", "caption", "credit", NULL,
};
static const char *const comment_hints[] = {
    "comments", "comment-list", "commentlist", "disqus", NULL,
};
static const char *const maybe_hints[] = {
    "and", "article", "body", "column", "content", "main", "shadow", NULL,
};

float vf_hint_class_weight(const vf_node *el)
{
    float w = 0;
    const char *names[2] = { "class", "id" };
    for (int i = 0; i < 2; i++) {
        const char *v = vf_dom_attr(el, names[i]);
        if (!v || !v[0])
            continue;
        char soup[256];
        size_t o = 0;
        for (; *v && o + 1 < sizeof soup; v++)
            soup[o++] = (*v >= 'A' && *v <= 'Z') ? (char)(*v + 32) : *v;
        soup[o] = '\0';
        if (vf_dom_hint_any(soup, negative_hints))
            w -= 25;
        if (vf_dom_hint_any(soup, positive_hints))
            w += 25;
    }
    return w;
}

bool vf_hint_article_body(const vf_node *el)
{
    const char *ip = vf_dom_attr(el, "itemprop");
    return ip && strstr(ip, "articleBody") != NULL;
}

static bool soup_says(const vf_node *el, const char *const *words, bool unless_content)
{
    char soup[256];
    vf_dom_class_id(el, soup, sizeof soup);
    return vf_dom_hint_any(soup, words) && !(unless_content && vf_dom_hint_any(soup, maybe_hints));
}

bool vf_hint_unlikely(const vf_node *el)
{
    return soup_says(el, unlikely_hints, true);
}

bool vf_hint_comment_thread(const vf_node *el)
{
    return soup_says(el, comment_hints, true);
}

bool vf_hint_beside_text(const vf_node *el)
{
    return soup_says(el, beside_hints, false);
}

bool vf_hint_credit_line(const vf_node *el)
{
    return soup_says(el, credit_hints, false);
}
