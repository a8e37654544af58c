/* Usability judgement of one fetched page, in the order the receipt reports
 * failures: status, content type, wall family, empty, length, required text.
 * The first failing check decides the outcome and the detail. */
#include "broker/judge/classify.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "broker/judge/text_fold.h"
#include "broker/judge/utf8_text.h"

/* Where an extra marker counts: anywhere on a page shorter than
 * SHORT_PAGE_CHARS code points, only within the first HEAD_CHARS of a
 * longer one (a long article that mentions a marker deep inside is no wall). */
#define SHORT_PAGE_CHARS 2000
#define HEAD_CHARS 1000

/* Extra markers come from config; bound what a bad one can cost per page.
 * A limit hit counts as a wall (fail closed). */
#define MARKER_MATCH_LIMIT 1000000u
#define MARKER_DEPTH_LIMIT 10000u
#define MARKER_HEAP_LIMIT_KIB 16384u

/* Longest matched marker text quoted in a detail. */
#define MARKER_QUOTE_MAX 64

struct vf_classifier {
    pcre2_code **re;
    vf_wall *family;           /* per extra marker */
    size_t n;
    pcre2_match_context *mctx; /* limits only; copied per call for the offset limit */
    vf_wall_lexicon *lexicon;  /* the built-in families */
};

const char *vf_outcome_name(vf_outcome outcome)
{
    switch (outcome) {
    case VF_OUTCOME_OK: return "ok";
    case VF_OUTCOME_TRANSPORT_ERROR: return "transport_error";
    case VF_OUTCOME_HTTP_ERROR: return "http_error";
    case VF_OUTCOME_UNUSABLE_CONTENT: return "unusable_content";
    case VF_OUTCOME_MALFORMED_RESPONSE: return "malformed_response";
    }
    return "unknown";
}

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* "paywall: members only" -> family paywall, pattern "members only". */
static const char *split_family(const char *marker, vf_wall *family)
{
    const char *colon = strchr(marker, ':');
    *family = VF_WALL_BOT_CHALLENGE;
    if (!colon || colon - marker > 32)
        return marker;
    char name[40];
    memcpy(name, marker, (size_t)(colon - marker));
    name[colon - marker] = '\0';
    vf_wall w = vf_wall_from_name(name);
    if (!vf_wall_can_disable(w))
        return marker;
    *family = w;
    colon++;
    while (*colon == ' ')
        colon++;
    return colon;
}

vf_classifier *vf_classifier_new(const char *const *markers, size_t n_markers,
                                 char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!markers)
        n_markers = 0;
    vf_classifier *c = calloc(1, sizeof *c);
    if (!c)
        goto oom;
    c->re = calloc(n_markers ? n_markers : 1, sizeof *c->re);
    c->family = calloc(n_markers ? n_markers : 1, sizeof *c->family);
    c->mctx = pcre2_match_context_create(NULL);
    c->lexicon = vf_wall_lexicon_new();
    if (!c->re || !c->family || !c->mctx || !c->lexicon)
        goto oom;
    pcre2_set_match_limit(c->mctx, MARKER_MATCH_LIMIT);
    pcre2_set_depth_limit(c->mctx, MARKER_DEPTH_LIMIT);
    pcre2_set_heap_limit(c->mctx, MARKER_HEAP_LIMIT_KIB);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        goto oom;
    for (size_t i = 0; i < n_markers; i++) {
        vf_wall family;
        const char *pat = split_family(markers[i] ? markers[i] : "", &family);
        int code;
        PCRE2_SIZE off;
        /* MATCH_INVALID_UTF: a stray byte in the text must not turn into a
         * match error; USE_OFFSET_LIMIT: needed for the head-only rule. */
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                       PCRE2_CASELESS | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
                                           PCRE2_USE_OFFSET_LIMIT,
                                       &code, &off, NULL);
        if (!re) {
            char msg[128];
            pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, sizeof msg);
            set_err(err, errlen, "extra marker '%s': %s at offset %zu", pat, msg, (size_t)off);
            goto fail;
        }
        c->family[c->n] = family;
        c->re[c->n++] = re;
        (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
        /* A marker that matches nothing at all would call every page a wall. */
        if (pcre2_match(re, (PCRE2_SPTR) "", 0, 0, 0, md, c->mctx) >= 0) {
            set_err(err, errlen, "extra marker '%s': matches empty text", pat);
            goto fail;
        }
    }
    pcre2_match_data_free(md);
    return c;
fail:
    pcre2_match_data_free(md);
    vf_classifier_free(c);
    return NULL;
oom:
    set_err(err, errlen, "out of memory");
    vf_classifier_free(c);
    return NULL;
}

void vf_classifier_free(vf_classifier *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        pcre2_code_free(c->re[i]);
    free(c->re);
    free(c->family);
    pcre2_match_context_free(c->mctx);
    vf_wall_lexicon_free(c->lexicon);
    free(c);
}

/* RFC 9110 token character (ASCII only, independent of locale). */
static bool is_tchar(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && strncasecmp(s + n - k, suffix, k) == 0; /* n > k: "+json" alone is no type */
}

bool vf_content_type_is_text(const char *content_type)
{
    if (!content_type)
        return false;
    const char *p = content_type;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *type = p;
    while (is_tchar((unsigned char)*p))
        p++;
    size_t type_len = (size_t)(p - type);
    if (type_len == 0 || *p != '/')
        return false;
    const char *sub = ++p;
    while (is_tchar((unsigned char)*p))
        p++;
    size_t sub_len = (size_t)(p - sub);
    while (*p == ' ' || *p == '\t')
        p++;
    if (sub_len == 0 || (*p != '\0' && *p != ';'))
        return false;
    if (type_len == 4 && strncasecmp(type, "text", 4) == 0)
        return true;
    if (type_len != 11 || strncasecmp(type, "application", 11) != 0)
        return false;
    if ((sub_len == 4 && strncasecmp(sub, "json", 4) == 0) ||
        (sub_len == 3 && strncasecmp(sub, "xml", 3) == 0) ||
        (sub_len == 9 && strncasecmp(sub, "xhtml+xml", 9) == 0))
        return true;
    return ends_with_ci(sub, sub_len, "+json") || ends_with_ci(sub, sub_len, "+xml");
}

/* Copy of the media type (no parameters) fit to quote in a detail: bounded,
 * printable ASCII only, because the header came from a hostile origin. */
static void quote_media_type(const char *ct, char *out, size_t outlen)
{
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    if (n > outlen - 1)
        n = outlen - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)ct[i];
        out[i] = ch >= 0x21 && ch <= 0x7e ? (char)ch : '?';
    }
    out[n] = '\0';
}

/* Matched marker text, ASCII-lowercased, bounded (never splitting a UTF-8
 * sequence) and with control characters blanked, fit to quote in a detail. */
static void quote_marker(const char *m, size_t n, char *out, size_t outlen)
{
    if (n > outlen - 1) {
        n = outlen - 1;
        while (n > 0 && ((unsigned char)m[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)m[i];
        if (ch < 0x20 || ch == 0x7f)
            ch = ' ';
        else if (ch >= 'A' && ch <= 'Z')
            ch = (unsigned char)(ch + 32);
        out[i] = (char)ch;
    }
    out[n] = '\0';
}

/* Byte offset where code point number `index` starts (len if there are fewer). */
static size_t offset_of_char(const char *s, size_t len, size_t index)
{
    size_t seen = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && seen++ == index)
            return i;
    return len;
}

typedef enum { MARKER_NONE, MARKER_FOUND, MARKER_ERROR } marker_result;

static marker_result find_marker(const vf_classifier *c, unsigned disabled, const char *text,
                                 size_t len, size_t chars, char *quote, size_t quote_len,
                                 vf_wall *family)
{
    if (!c || c->n == 0)
        return MARKER_NONE;
    pcre2_match_context *mctx = pcre2_match_context_copy(c->mctx);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    marker_result res = MARKER_ERROR; /* allocation failure fails closed too */
    *family = VF_WALL_BOT_CHALLENGE;
    if (!mctx || !md)
        goto out;
    if (chars >= SHORT_PAGE_CHARS)
        pcre2_set_offset_limit(mctx, offset_of_char(text, len, HEAD_CHARS - 1));
    res = MARKER_NONE;
    for (size_t i = 0; i < c->n && res == MARKER_NONE; i++) {
        if (disabled & VF_WALL_BIT(c->family[i]))
            continue;
        int rc = pcre2_match(c->re[i], (PCRE2_SPTR)text, len, 0, 0, md, mctx);
        if (rc >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            quote_marker(text + ov[0], ov[1] - ov[0], quote, quote_len);
            *family = c->family[i];
            res = MARKER_FOUND;
        } else if (rc != PCRE2_ERROR_NOMATCH) {
            *family = c->family[i];
            res = MARKER_ERROR;
        }
    }
out:
    pcre2_match_data_free(md);
    pcre2_match_context_free(mctx);
    return res;
}

/* Code points that are not whitespace: a page of blanks is empty. */
static bool has_visible_text(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!strchr(" \t\r\n\f\v", s[i]))
            return true;
    return false;
}

/* must_contain: folded by default so an ASCII apostrophe finds U+2019 and
 * "Cafe" finds "CAFE"; exact mode compares bytes. Out of memory: not found. */
static bool contains_required(const char *text, size_t len, const char *needle, bool exact)
{
    if (exact)
        return memmem(text, len, needle, strlen(needle)) != NULL;
    size_t fn = 0;
    char *fneedle = vf_fold_text(needle, strlen(needle), &fn);
    /* The page is folded a window at a time, not into a copy of itself. */
    bool found = false;
    if (fneedle && !vf_fold_contains(text, len, fneedle, fn, &found))
        found = false;
    free(fneedle);
    return found;
}

__attribute__((format(printf, 2, 3)))
static void say(vf_verdict *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof v->detail, fmt, ap);
    va_end(ap);
}

/* Appends "; wall <family>: <why>" (or "wall ...") to the detail. */
static void name_wall(vf_verdict *v, vf_wall w, const char *why)
{
    size_t n = strlen(v->detail);
    snprintf(v->detail + n, sizeof v->detail - n, "%swall %s: %s", n ? "; " : "", vf_wall_name(w), why);
    v->wall = w;
}

/* Built-in families first, then the operator's extra markers. */
static bool find_wall(const vf_classifier *c, const vf_classify_input *in, const char *text,
                      size_t len, vf_verdict *v)
{
    char why[256];
    vf_wall w = vf_wall_judge(c ? c->lexicon : NULL, in->page, in->http_status, text, len,
                              v->content_chars, in->disabled_walls, why, sizeof why);
    if (w != VF_WALL_NONE) {
        name_wall(v, w, why);
        return true;
    }
    char quote[MARKER_QUOTE_MAX + 1];
    char marker_why[MARKER_QUOTE_MAX + 32];
    switch (find_marker(c, in->disabled_walls, text, len, v->content_chars, quote, sizeof quote, &w)) {
    case MARKER_FOUND:
        snprintf(marker_why, sizeof marker_why, "marker '%s'", quote);
        name_wall(v, w, marker_why);
        return true;
    case MARKER_ERROR:
        name_wall(v, w, "marker check failed (match limit)");
        return true;
    case MARKER_NONE:
        break;
    }
    return false;
}

void vf_classify_verdict(const vf_classifier *c, const vf_classify_input *in, vf_verdict *v)
{
    memset(v, 0, sizeof *v);
    const char *text = in && in->text ? in->text : "";
    size_t len = in && in->text ? in->text_len : 0;
    v->content_chars = vf_utf8_count(text, len);
    if (!in) {
        v->outcome = VF_OUTCOME_MALFORMED_RESPONSE;
        say(v, "no response to classify");
        return;
    }
    if (in->http_status < 200 || in->http_status > 299) {
        /* The status decides; the family, when one is recognised, says why. */
        v->outcome = VF_OUTCOME_HTTP_ERROR;
        say(v, "HTTP %d", in->http_status);
        /* A real 404/410 is no soft 404: the status already says it. */
        vf_classify_input named = *in;
        if (in->http_status == 404 || in->http_status == 410)
            named.disabled_walls |= VF_WALL_BIT(VF_WALL_SOFT_404);
        if (in->content_type && vf_content_type_is_text(in->content_type))
            (void)find_wall(c, &named, text, len, v);
        else if (in->http_status == 429 && !(in->disabled_walls & VF_WALL_BIT(VF_WALL_RATE_LIMITED)))
            name_wall(v, VF_WALL_RATE_LIMITED, "HTTP 429");
        return;
    }
    v->outcome = VF_OUTCOME_UNUSABLE_CONTENT;
    if (!in->content_type || !in->content_type[0]) {
        say(v, "no content type");
        return;
    }
    if (!vf_content_type_is_text(in->content_type)) {
        char shown[MARKER_QUOTE_MAX + 1];
        quote_media_type(in->content_type, shown, sizeof shown);
        say(v, "content type '%s' is not text", shown);
        return;
    }
    if (find_wall(c, in, text, len, v))
        return;
    if (in->min_chars > 0 && !has_visible_text(text, len)) {
        name_wall(v, VF_WALL_EMPTY, "no main-content text");
        return;
    }
    if (v->content_chars < in->min_chars) {
        char why[96];
        snprintf(why, sizeof why, "%zu < %u characters of main content", v->content_chars, in->min_chars);
        name_wall(v, VF_WALL_TOO_SHORT, why);
        return;
    }
    if (in->must_contain && !contains_required(text, len, in->must_contain, in->must_contain_exact)) {
        say(v, "required text not found");
        return;
    }
    v->outcome = VF_OUTCOME_OK;
    v->thin = v->content_chars < VF_THIN_CHARS;
    say(v, "usable content");
}

vf_outcome vf_classify(const vf_classifier *c, const vf_classify_input *in,
                       char *detail, size_t detail_len, size_t *content_chars)
{
    vf_verdict *v = malloc(sizeof *v);
    if (!v) {
        if (detail && detail_len)
            snprintf(detail, detail_len, "out of memory");
        return VF_OUTCOME_UNUSABLE_CONTENT;
    }
    vf_classify_verdict(c, in, v);
    if (detail && detail_len)
        snprintf(detail, detail_len, "%s", v->detail);
    if (content_chars)
        *content_chars = v->content_chars;
    vf_outcome o = v->outcome;
    free(v);
    return o;
}
