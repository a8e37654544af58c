#include "policy/provider_body.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define URL_MARK "{url}"

typedef struct {
    const char *url;          /* NULL = count only */
    unsigned timeout_ms;
    int urls;
    int misplaced_typed;
    bool failed;
} body_walk;

/* "{timeout_ms}" / "{timeout_s}" as a whole string become integers. */
static json_t *typed_value(const char *s, unsigned timeout_ms)
{
    if (strcmp(s, "{timeout_ms}") == 0)
        return json_integer((json_int_t)timeout_ms);
    if (strcmp(s, "{timeout_s}") == 0)
        return json_integer((json_int_t)(timeout_ms >= 2000 ? timeout_ms / 1000 : 1));
    return NULL;
}

/* s with every "{url}" replaced by w->url; malloc'd. */
static char *replace_url(const char *s, const char *url)
{
    size_t n = 0, ul = strlen(url), ml = strlen(URL_MARK);
    for (const char *p = strstr(s, URL_MARK); p; p = strstr(p + ml, URL_MARK))
        n++;
    char *out = malloc(strlen(s) + n * ul + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (const char *p = s, *at; ; p = at + ml) {
        at = strstr(p, URL_MARK);
        size_t lit = at ? (size_t)(at - p) : strlen(p);
        memcpy(o, p, lit);
        o += lit;
        if (!at)
            break;
        memcpy(o, url, ul);
        o += ul;
    }
    *o = '\0';
    return out;
}

/* A replacement for string value v, or NULL to keep it. */
static json_t *visit_string(body_walk *w, const json_t *v)
{
    const char *s = json_string_value(v);
    json_t *typed = typed_value(s, w->timeout_ms);
    if (typed) {
        if (!w->url)
            json_decref(typed);
        return w->url ? typed : NULL;
    }
    if (strstr(s, "{timeout_"))
        w->misplaced_typed = 1;
    if (!strstr(s, URL_MARK))
        return NULL;
    for (const char *p = strstr(s, URL_MARK); p; p = strstr(p + 1, URL_MARK))
        w->urls++;
    if (!w->url)
        return NULL;
    char *filled = replace_url(s, w->url);
    /* json_string checks UTF-8: a target that is not UTF-8 fails the render. */
    json_t *out = filled ? json_string(filled) : NULL;
    free(filled);
    if (!out)
        w->failed = true;
    return out;
}

static void walk(body_walk *w, json_t *v, int depth)
{
    if (depth > VF_BODY_MAX_DEPTH) {
        w->failed = true;
        return;
    }
    if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            json_t *rep = json_is_string(child) ? visit_string(w, child) : NULL;
            if (rep)
                json_object_set_new(v, key, rep);
            else
                walk(w, child, depth + 1);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *child = json_array_get(v, i);
            json_t *rep = json_is_string(child) ? visit_string(w, child) : NULL;
            if (rep)
                json_array_set_new(v, i, rep);
            else
                walk(w, child, depth + 1);
        }
    }
}

int vf_body_count_url(const char *template_json, int *misplaced_typed)
{
    json_t *root = json_loads(template_json, JSON_REJECT_DUPLICATES, NULL);
    if (!root)
        return -1;
    body_walk w = { 0 };
    walk(&w, root, 0);
    json_decref(root);
    *misplaced_typed = w.misplaced_typed;
    return w.failed ? -1 : w.urls;
}

char *vf_body_render(const char *template_json, const char *url, unsigned timeout_ms)
{
    json_t *root = json_loads(template_json, JSON_REJECT_DUPLICATES, NULL);
    if (!root)
        return NULL;
    body_walk w = { .url = url, .timeout_ms = timeout_ms };
    walk(&w, root, 0);
    char *out = w.failed ? NULL : json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return out;
}
