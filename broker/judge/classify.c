/* Usability judgement of one fetched page, in the order the receipt reports
 * failures: status, content type, interstitial wall, length, required text.
 * The first failing check decides the outcome and the detail. */
#include "broker/judge/classify.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "broker/judge/utf8_text.h"

/* Where a marker counts. An interstitial is a small page that says what it
 * is up front; a long article that mentions "captcha" deep inside is not a
 * wall. So a marker counts anywhere on a page shorter than SHORT_PAGE_CHARS
 * code points, and on a longer page only when it starts within the first
 * HEAD_CHARS code points. */
#define SHORT_PAGE_CHARS 2000
#define HEAD_CHARS 1000

/* Custom markers come from config; bound what a bad one can cost per page.
 * A limit hit counts as a wall (fail closed). */
#define MARKER_MATCH_LIMIT 1000000u
#define MARKER_DEPTH_LIMIT 10000u
#define MARKER_HEAP_LIMIT_KIB 16384u

/* Longest matched marker text quoted in a detail. */
#define MARKER_QUOTE_MAX 64

const char *const vf_default_interstitial_markers[] = {
    "just a moment",
    "enable javascript and cookies",
    "checking your browser",
    "attention required",
    "verify you are human",
    "are you a robot",
    "captcha",
    "access denied",
    "cf-browser-verification",
    "please enable cookies",
    "ddos protection by",
    NULL,
};

struct vf_classifier {
    pcre2_code **re;
    size_t n;
    pcre2_match_context *mctx; /* limits only; copied per call for the offset limit */
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

vf_classifier *vf_classifier_new(const char *const *markers, size_t n_markers,
                                 char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!markers || n_markers == 0) {
        markers = vf_default_interstitial_markers;
        for (n_markers = 0; markers[n_markers]; n_markers++)
            ;
    }
    vf_classifier *c = calloc(1, sizeof *c);
    if (!c)
        goto oom;
    c->re = calloc(n_markers ? n_markers : 1, sizeof *c->re);
    c->mctx = pcre2_match_context_create(NULL);
    if (!c->re || !c->mctx)
        goto oom;
    pcre2_set_match_limit(c->mctx, MARKER_MATCH_LIMIT);
    pcre2_set_depth_limit(c->mctx, MARKER_DEPTH_LIMIT);
    pcre2_set_heap_limit(c->mctx, MARKER_HEAP_LIMIT_KIB);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        goto oom;
    for (size_t i = 0; i < n_markers; i++) {
        const char *pat = markers[i] ? markers[i] : "";
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
            set_err(err, errlen, "interstitial marker '%s': %s at offset %zu", pat, msg, (size_t)off);
            goto fail;
        }
        c->re[c->n++] = re;
        (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
        /* A marker that matches nothing at all would call every page a wall. */
        if (pcre2_match(re, (PCRE2_SPTR) "", 0, 0, 0, md, c->mctx) >= 0) {
            set_err(err, errlen, "interstitial marker '%s': matches empty text", pat);
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
    pcre2_match_context_free(c->mctx);
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

static marker_result find_marker(const vf_classifier *c, const char *text, size_t len,
                                 size_t chars, char *quote, size_t quote_len)
{
    if (!c || c->n == 0)
        return MARKER_NONE;
    pcre2_match_context *mctx = pcre2_match_context_copy(c->mctx);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    marker_result res = MARKER_ERROR; /* allocation failure fails closed too */
    if (!mctx || !md)
        goto out;
    if (chars >= SHORT_PAGE_CHARS)
        pcre2_set_offset_limit(mctx, offset_of_char(text, len, HEAD_CHARS - 1));
    res = MARKER_NONE;
    for (size_t i = 0; i < c->n && res == MARKER_NONE; i++) {
        int rc = pcre2_match(c->re[i], (PCRE2_SPTR)text, len, 0, 0, md, mctx);
        if (rc >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            quote_marker(text + ov[0], ov[1] - ov[0], quote, quote_len);
            res = MARKER_FOUND;
        } else if (rc != PCRE2_ERROR_NOMATCH) {
            res = MARKER_ERROR;
        }
    }
out:
    pcre2_match_data_free(md);
    pcre2_match_context_free(mctx);
    return res;
}

vf_outcome vf_classify(const vf_classifier *c, const vf_classify_input *in,
                       char *detail, size_t detail_len, size_t *content_chars)
{
    char scratch[1];
    if (!detail || detail_len == 0) {
        detail = scratch;
        detail_len = sizeof scratch;
    }
    const char *text = in && in->text ? in->text : "";
    size_t len = in && in->text ? in->text_len : 0;
    size_t chars = vf_utf8_count(text, len);
    if (content_chars)
        *content_chars = chars;
    if (!in) {
        snprintf(detail, detail_len, "no response to classify");
        return VF_OUTCOME_MALFORMED_RESPONSE;
    }

    if (in->http_status < 200 || in->http_status > 299) {
        snprintf(detail, detail_len, "HTTP %d", in->http_status);
        return VF_OUTCOME_HTTP_ERROR;
    }
    if (!in->content_type || !in->content_type[0]) {
        snprintf(detail, detail_len, "no content type");
        return VF_OUTCOME_UNUSABLE_CONTENT;
    }
    if (!vf_content_type_is_text(in->content_type)) {
        char shown[MARKER_QUOTE_MAX + 1];
        quote_media_type(in->content_type, shown, sizeof shown);
        snprintf(detail, detail_len, "content type '%s' is not text", shown);
        return VF_OUTCOME_UNUSABLE_CONTENT;
    }
    char quote[MARKER_QUOTE_MAX + 1];
    switch (find_marker(c, text, len, chars, quote, sizeof quote)) {
    case MARKER_FOUND:
        snprintf(detail, detail_len, "interstitial page detected ('%s')", quote);
        return VF_OUTCOME_UNUSABLE_CONTENT;
    case MARKER_ERROR:
        snprintf(detail, detail_len, "interstitial check failed (match limit)");
        return VF_OUTCOME_UNUSABLE_CONTENT;
    case MARKER_NONE:
        break;
    }
    if (chars < in->min_chars) {
        snprintf(detail, detail_len, "content too short (%zu < %u characters)", chars, in->min_chars);
        return VF_OUTCOME_UNUSABLE_CONTENT;
    }
    if (in->must_contain && !memmem(text, len, in->must_contain, strlen(in->must_contain))) {
        snprintf(detail, detail_len, "required text not found");
        return VF_OUTCOME_UNUSABLE_CONTENT;
    }
    snprintf(detail, detail_len, "usable content");
    return VF_OUTCOME_OK;
}
