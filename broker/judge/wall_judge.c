/* Wall families from evidence. Each family collects cues (title, sentence,
 * weak phrase, vendor signal) and fires only on a combination that walls
 * show and real pages do not: the weaker the cue, the smaller the main
 * content must be. Families are checked in a fixed order; the first that
 * fires names the wall. */
#include "broker/judge/wall_judge.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/judge/text_fold.h"
#include "broker/judge/wall_phrases.h"

/* Folded text windows: walls say what they are near the top, paywalls at
 * the end of a teaser; the middle of a long text decides nothing. */
#define HEAD_BYTES 8192u
#define TAIL_BYTES 4096u
#define TITLE_BYTES 1024u
#define MAX_SEGMENTS 8u
#define FIRST_LINE_BYTES 200u

/* Text phrases by their first two folded bytes, so one pass over the text
 * finds them all instead of one memmem per phrase. A bit per hash of the
 * first eight bytes turns away almost every position before its chain is
 * walked: phrases begin with common words ("you ", "this"), so fewer bytes
 * would let most of a page through. */
#define PAIR_BUCKETS 4096u
#define NO_PHRASE UINT32_MAX
#define START_BITS 65536u
#define START_BYTES 8u

struct vf_wall_lexicon {
    char **folded; /* parallel to vf_wall_phrase_at() */
    size_t *folded_len;
    size_t n;
    uint32_t *bucket; /* PAIR_BUCKETS heads of chains through next[], text and weak phrases */
    uint32_t *next;
    uint64_t starts[START_BITS / 64]; /* start_hash of every chained phrase */
};

static unsigned pair_bucket(const char *s)
{
    return ((unsigned char)s[0] * 251u + (unsigned char)s[1]) % PAIR_BUCKETS;
}

/* s has START_BYTES readable bytes. */
static unsigned start_hash(const char *s)
{
    uint64_t w;
    memcpy(&w, s, sizeof w);
    return (unsigned)((w * UINT64_C(0x9E3779B97F4A7C15)) >> 48);
}

static bool may_start_phrase(const vf_wall_lexicon *lx, const char *s)
{
    unsigned h = start_hash(s);
    return (lx->starts[h >> 6] >> (h & 63)) & 1;
}

static bool is_text_cue(size_t i)
{
    vf_cue_kind k = vf_wall_phrase_at(i)->kind;
    return k == VF_CUE_TEXT || k == VF_CUE_WEAK;
}

/* Chains keep index order; a phrase shorter than START_BYTES stays out and
 * is searched on its own. */
static bool index_text_phrases(vf_wall_lexicon *lx)
{
    lx->bucket = malloc(PAIR_BUCKETS * sizeof *lx->bucket);
    lx->next = malloc(lx->n * sizeof *lx->next);
    if (!lx->bucket || !lx->next)
        return false;
    for (size_t b = 0; b < PAIR_BUCKETS; b++)
        lx->bucket[b] = NO_PHRASE;
    for (size_t i = lx->n; i-- > 0;) {
        lx->next[i] = NO_PHRASE;
        if (!is_text_cue(i) || lx->folded_len[i] < START_BYTES)
            continue;
        unsigned h = start_hash(lx->folded[i]);
        lx->starts[h >> 6] |= UINT64_C(1) << (h & 63);
        unsigned b = pair_bucket(lx->folded[i]);
        lx->next[i] = lx->bucket[b];
        lx->bucket[b] = (uint32_t)i;
    }
    return true;
}

vf_wall_lexicon *vf_wall_lexicon_new(void)
{
    vf_wall_lexicon *lx = calloc(1, sizeof *lx);
    if (!lx)
        return NULL;
    lx->n = vf_wall_phrase_count();
    lx->folded = calloc(lx->n, sizeof *lx->folded);
    lx->folded_len = calloc(lx->n, sizeof *lx->folded_len);
    if (!lx->folded || !lx->folded_len) {
        vf_wall_lexicon_free(lx);
        return NULL;
    }
    for (size_t i = 0; i < lx->n; i++) {
        const char *p = vf_wall_phrase_at(i)->phrase;
        lx->folded[i] = vf_fold_text(p, strlen(p), &lx->folded_len[i]);
        if (!lx->folded[i]) {
            vf_wall_lexicon_free(lx);
            return NULL;
        }
    }
    if (!index_text_phrases(lx)) {
        vf_wall_lexicon_free(lx);
        return NULL;
    }
    return lx;
}

void vf_wall_lexicon_free(vf_wall_lexicon *lx)
{
    if (!lx)
        return;
    for (size_t i = 0; lx->folded && i < lx->n; i++)
        free(lx->folded[i]);
    free(lx->folded);
    free(lx->folded_len);
    free(lx->bucket);
    free(lx->next);
    free(lx);
}

/* ---- evidence gathering ---- */

typedef enum { SIG_DECISIVE, SIG_VENDOR, SIG_VENDOR_LARGE, SIG_WEAK } sig_strength;

/* Worker tokens and what they say. A token matches a rule equal to it or
 * to its part before '=' ("mk:cmp=onetrust" matches "mk:cmp"). */
static const struct {
    const char *token;
    vf_wall wall;
    sig_strength strength;
} signal_rules[] = {
    { "hdr:cf-mitigated=challenge", VF_WALL_BOT_CHALLENGE, SIG_DECISIVE },
    { "hdr:x-amzn-waf-action=challenge", VF_WALL_BOT_CHALLENGE, SIG_DECISIVE },
    { "hdr:x-amzn-waf-action=captcha", VF_WALL_BOT_CHALLENGE, SIG_DECISIVE },
    { "hdr:x-amzn-waf-action=block", VF_WALL_ACCESS_DENIED, SIG_DECISIVE },
    { "hdr:x-vercel-mitigated=challenge", VF_WALL_BOT_CHALLENGE, SIG_DECISIVE },
    { "hdr:x-vercel-mitigated=deny", VF_WALL_ACCESS_DENIED, SIG_DECISIVE },
    { "hdr:x-dd-b", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "hdr:retry-after", VF_WALL_RATE_LIMITED, SIG_WEAK },
    { "mk:cf-challenge", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:cf-error", VF_WALL_ACCESS_DENIED, SIG_VENDOR },
    { "mk:datadome-captcha", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:px-captcha", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:akamai-cpt", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:akamai-denied", VF_WALL_ACCESS_DENIED, SIG_VENDOR },
    { "mk:incapsula-block", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:vercel-checkpoint", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:aws-waf-challenge", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:ddos-guard", VF_WALL_BOT_CHALLENGE, SIG_VENDOR },
    { "mk:cloudfront-error", VF_WALL_ACCESS_DENIED, SIG_VENDOR },
    { "mk:captcha-widget", VF_WALL_BOT_CHALLENGE, SIG_WEAK },
    { "mk:google-consent", VF_WALL_CONSENT, SIG_VENDOR_LARGE },
    { "mk:yahoo-consent", VF_WALL_CONSENT, SIG_VENDOR_LARGE },
    { "mk:cmp", VF_WALL_CONSENT, SIG_WEAK },
    { "mk:not-free", VF_WALL_PAYWALL, SIG_WEAK },
    { "mk:paywall", VF_WALL_PAYWALL, SIG_WEAK },
    { "mk:password-input", VF_WALL_LOGIN, SIG_WEAK },
    { "mk:spa-root", VF_WALL_JS_REQUIRED, SIG_WEAK },
    { "mk:skeleton", VF_WALL_JS_REQUIRED, SIG_WEAK },
    { "mk:noscript-js", VF_WALL_JS_REQUIRED, SIG_WEAK },
};

typedef struct {
    const char *title_strong;  /* first phrase that matched, or NULL */
    const char *title;
    const char *text;
    unsigned n_text;           /* distinct wall sentences seen */
    const char *weak;
    unsigned n_weak;           /* distinct weak phrases seen */
    const char *decisive, *vendor, *vendor_large, *weak_signal;
} cues;

static bool token_matches(const char *token, const char *rule)
{
    size_t n = strlen(rule);
    if (strncmp(token, rule, n) != 0)
        return false;
    return token[n] == '\0' || (token[n] == '=' && !strchr(rule, '='));
}

static void gather_signals(const vf_page_evidence *ev, cues *c)
{
    if (!ev || !ev->signals)
        return;
    for (size_t i = 0; i < ev->n_signals; i++) {
        const char *tok = ev->signals[i];
        if (!tok)
            continue;
        for (size_t r = 0; r < sizeof signal_rules / sizeof signal_rules[0]; r++) {
            if (!token_matches(tok, signal_rules[r].token))
                continue;
            cues *f = &c[signal_rules[r].wall];
            const char **slot = signal_rules[r].strength == SIG_DECISIVE ? &f->decisive
                                : signal_rules[r].strength == SIG_VENDOR ? &f->vendor
                                : signal_rules[r].strength == SIG_VENDOR_LARGE ? &f->vendor_large
                                                                                : &f->weak_signal;
            if (!*slot)
                *slot = signal_rules[r].token;
        }
    }
}

static bool is_trim_byte(const char *s, size_t i, size_t n, size_t *width)
{
    unsigned char ch = (unsigned char)s[i];
    *width = 1;
    if (ch < 0x80)
        return !((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch >= 0x80);
    /* ¡ ¿, the ideographic comma and full stop, U+FFFD (a repaired byte). */
    if (i + 1 < n && ch == 0xC2 && ((unsigned char)s[i + 1] == 0xA1 || (unsigned char)s[i + 1] == 0xBF)) {
        *width = 2;
        return true;
    }
    if (i + 2 < n && ch == 0xE3 && (unsigned char)s[i + 1] == 0x80 &&
        ((unsigned char)s[i + 2] >= 0x81 && (unsigned char)s[i + 2] <= 0x82)) {
        *width = 3;
        return true;
    }
    if (i + 2 < n && ch == 0xEF && (unsigned char)s[i + 1] == 0xBF && (unsigned char)s[i + 2] == 0xBD) {
        *width = 3;
        return true;
    }
    return false;
}

/* Trim everything but letters and digits from both ends of s[*b..*e). */
static void trim_segment(const char *s, size_t *b, size_t *e)
{
    size_t w;
    while (*b < *e && is_trim_byte(s, *b, *e, &w))
        *b += w;
    while (*e > *b) {
        size_t i = *e - 1;
        while (i > *b && ((unsigned char)s[i] & 0xC0) == 0x80)
            i--;
        if (!is_trim_byte(s, i, *e, &w) || i + w != *e)
            break;
        *e = i;
    }
}

static bool seg_equals(const char *s, size_t b, size_t e, const char *phrase)
{
    size_t n = strlen(phrase);
    if (e - b == n && memcmp(s + b, phrase, n) == 0)
        return true;
    /* "403 Forbidden", "Not Found 404": a status number beside the phrase. */
    size_t b2 = b, e2 = e;
    while (b2 < e && s[b2] >= '0' && s[b2] <= '9')
        b2++;
    while (e2 > b && s[e2 - 1] >= '0' && s[e2 - 1] <= '9')
        e2--;
    if (b2 > b || e2 < e) {
        trim_segment(s, &b2, &e2);
        if (b2 < e2 && e2 - b2 == n && memcmp(s + b2, phrase, n) == 0)
            return true;
    }
    return false;
}

/* Title segments: "Just a moment... | Example" -> "just a moment", "example". */
static size_t split_title(const char *t, size_t n, size_t seg[][2])
{
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n && k < MAX_SEGMENTS; i++) {
        size_t sep = 0;
        if (i == n)
            sep = 1;
        else if (t[i] == '|' || t[i] == ':' || t[i] == '>')
            sep = 1;
        else if (t[i] == ' ' && i + 2 < n && t[i + 1] == '-' && t[i + 2] == ' ')
            sep = 3;
        else if (i + 1 < n && (unsigned char)t[i] == 0xC2 && ((unsigned char)t[i + 1] == 0xB7 || (unsigned char)t[i + 1] == 0xBB))
            sep = 2; /* · » */
        else if (i + 2 < n && (unsigned char)t[i] == 0xE2 && (unsigned char)t[i + 1] == 0x80 && (unsigned char)t[i + 2] == 0xA2)
            sep = 3; /* • */
        if (!sep)
            continue;
        size_t b = start, e = i;
        trim_segment(t, &b, &e);
        if (b < e) {
            seg[k][0] = b;
            seg[k][1] = e;
            k++;
        }
        start = i + sep;
        i += sep - 1;
    }
    return k;
}

static void gather_titles(const vf_wall_lexicon *lx, const char *raw, cues *c)
{
    if (!raw || !raw[0])
        return;
    size_t rn = strnlen(raw, TITLE_BYTES);
    size_t n = 0;
    char *t = vf_fold_text(raw, rn, &n);
    if (!t)
        return;
    size_t seg[MAX_SEGMENTS][2];
    size_t k = split_title(t, n, seg);
    for (size_t i = 0; i < lx->n; i++) {
        const vf_wall_phrase *p = vf_wall_phrase_at(i);
        if (p->kind != VF_CUE_TITLE_STRONG && p->kind != VF_CUE_TITLE)
            continue;
        const char **slot = p->kind == VF_CUE_TITLE_STRONG ? &c[p->wall].title_strong : &c[p->wall].title;
        if (*slot)
            continue;
        for (size_t s = 0; s < k; s++)
            if (seg_equals(t, seg[s][0], seg[s][1], lx->folded[i])) {
                *slot = p->phrase;
                break;
            }
    }
    free(t);
}

/* Head and tail of the text, folded (cut on character boundaries). */
static char *fold_window(const char *text, size_t len, size_t *out_len)
{
    if (len <= HEAD_BYTES + TAIL_BYTES)
        return vf_fold_text(text, len, out_len);
    size_t h = HEAD_BYTES;
    while (h > 0 && ((unsigned char)text[h] & 0xC0) == 0x80)
        h--;
    size_t t = len - TAIL_BYTES;
    while (t < len && ((unsigned char)text[t] & 0xC0) == 0x80)
        t++;
    char *buf = malloc(h + 1 + (len - t));
    if (!buf)
        return NULL;
    memcpy(buf, text, h);
    buf[h] = '\n';
    memcpy(buf + h + 1, text + t, len - t);
    char *folded = vf_fold_text(buf, h + 1 + (len - t), out_len);
    free(buf);
    return folded;
}

/* found[i]: text phrase i occurs in f[0..n), for every text and weak phrase
 * (what memmem per phrase would say). */
static void find_text_phrases(const vf_wall_lexicon *lx, const char *f, size_t n, bool *found)
{
    for (size_t i = 0; i < lx->n; i++)
        if (is_text_cue(i) && lx->folded_len[i] < START_BYTES)
            found[i] = memmem(f, n, lx->folded[i], lx->folded_len[i]) != NULL;
    for (size_t at = 0; at + START_BYTES <= n; at++) {
        if (!may_start_phrase(lx, f + at))
            continue;
        for (uint32_t i = lx->bucket[pair_bucket(f + at)]; i != NO_PHRASE; i = lx->next[i]) {
            size_t k = lx->folded_len[i];
            if (!found[i] && k <= n - at && memcmp(f + at, lx->folded[i], k) == 0)
                found[i] = true;
        }
    }
}

static void gather_text(const vf_wall_lexicon *lx, const char *text, size_t len, cues *c)
{
    size_t n = 0;
    char *f = fold_window(text, len, &n);
    bool *found = f ? calloc(lx->n, sizeof *found) : NULL;
    if (!found) {
        free(f);
        return;
    }
    find_text_phrases(lx, f, n, found);
    for (size_t i = 0; i < lx->n; i++) {
        const vf_wall_phrase *p = vf_wall_phrase_at(i);
        if (!is_text_cue(i) || !found[i])
            continue;
        cues *fam = &c[p->wall];
        if (p->kind == VF_CUE_TEXT) {
            if (!fam->text)
                fam->text = p->phrase;
            fam->n_text++;
        } else {
            if (!fam->weak)
                fam->weak = p->phrase;
            fam->n_weak++;
        }
    }
    free(found);
    free(f);
}

/* ---- decisions ---- */

typedef struct {
    size_t chars;       /* main content, code points */
    bool chrome;        /* the main content is a small part of a larger page */
    bool password;
    int status;
} shape;

__attribute__((format(printf, 3, 4)))
static bool fire(char *why, size_t whylen, const char *fmt, ...)
{
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return true;
}

/* A title only walls carry, or a generic one with support. */
static bool title_rule(const cues *c, const shape *s, bool support, char *why, size_t whylen)
{
    if (c->title_strong && (s->chars < VF_WALL_SMALL_CHARS || (support && s->chars < VF_WALL_LARGE_CHARS)))
        return fire(why, whylen, "title '%s'", c->title_strong);
    if (c->title && support && s->chars < VF_WALL_SMALL_CHARS)
        return fire(why, whylen, "title '%s' with %s", c->title, c->text ? "wall text" : "page signal");
    if (c->title && (s->chars < VF_WALL_TINY_CHARS || (s->chrome && s->chars < VF_WALL_SHORT_CHARS)))
        return fire(why, whylen, "title '%s' over %zu characters of main text", c->title, s->chars);
    return false;
}

static bool signal_rule(const cues *c, const shape *s, char *why, size_t whylen)
{
    if (c->decisive)
        return fire(why, whylen, "signal %s", c->decisive);
    if (c->vendor && s->chars < VF_WALL_SMALL_CHARS)
        return fire(why, whylen, "signal %s", c->vendor);
    if (c->vendor_large && s->chars < VF_WALL_LARGE_CHARS)
        return fire(why, whylen, "signal %s", c->vendor_large);
    return false;
}

static bool text_rule(const cues *c, const shape *s, size_t limit, char *why, size_t whylen)
{
    if (c->text && s->chars < limit)
        return fire(why, whylen, "text '%s'", c->text);
    return false;
}

static bool decide(vf_wall w, const cues *c, const shape *s, char *why, size_t whylen)
{
    bool support = c->text || c->decisive || c->vendor || c->vendor_large || c->weak_signal;
    switch (w) {
    case VF_WALL_BOT_CHALLENGE:
    case VF_WALL_ACCESS_DENIED:
        if (signal_rule(c, s, why, whylen) || title_rule(c, s, support, why, whylen) ||
            text_rule(c, s, VF_WALL_SHORT_CHARS, why, whylen))
            return true;
        if (c->weak_signal && s->chars < VF_WALL_TINY_CHARS && (c->weak || c->text))
            return fire(why, whylen, "signal %s", c->weak_signal);
        return false;
    case VF_WALL_RATE_LIMITED:
        if (s->status == 429)
            return fire(why, whylen, "HTTP 429");
        return signal_rule(c, s, why, whylen) || title_rule(c, s, c->text || c->weak_signal, why, whylen) ||
               text_rule(c, s, VF_WALL_SHORT_CHARS, why, whylen);
    case VF_WALL_CONSENT:
        if (signal_rule(c, s, why, whylen) || title_rule(c, s, support || c->n_weak > 0, why, whylen))
            return true;
        /* Consent wording alone is also a privacy policy's: it needs the
         * consent manager's markup beside it. */
        if (c->weak_signal && c->n_weak >= 1 && s->chars < VF_WALL_TINY_CHARS)
            return fire(why, whylen, "signal %s with text '%s'", c->weak_signal, c->weak);
        if (c->weak_signal && c->n_weak >= 3 && s->chars < VF_WALL_SHORT_CHARS)
            return fire(why, whylen, "signal %s with consent text '%s' and %u more", c->weak_signal, c->weak,
                        c->n_weak - 1);
        if (c->weak_signal && s->chars < 120)
            return fire(why, whylen, "signal %s over %zu characters of main text", c->weak_signal, s->chars);
        return false;
    case VF_WALL_PAYWALL:
        /* One subscription sentence decides a short page; a longer teaser
         * needs a second cue (schema, vendor, another call to action), so
         * an article that quotes the sentence stays an article. */
        if (signal_rule(c, s, why, whylen) || text_rule(c, s, VF_WALL_SHORT_CHARS, why, whylen))
            return true;
        if (c->text && (c->weak_signal || c->n_text >= 2 || c->n_weak >= 1) && s->chars < VF_WALL_TEASER_CHARS)
            return fire(why, whylen, "text '%s' with %s", c->text,
                        c->weak_signal ? c->weak_signal : "another subscription prompt");
        /* Paywall markup (schema, vendor, class names) also sits on articles
         * that are free for this reader: it needs subscription wording. */
        if (c->weak_signal && s->chars < VF_WALL_SHORT_CHARS && c->n_weak > 0)
            return fire(why, whylen, "signal %s with text '%s'", c->weak_signal, c->weak);
        if (c->weak && c->weak_signal && s->chars < VF_WALL_SMALL_CHARS)
            return fire(why, whylen, "text '%s' with signal %s", c->weak, c->weak_signal);
        if (c->n_weak >= 2 && s->chars < VF_WALL_SHORT_CHARS && s->chrome)
            return fire(why, whylen, "text '%s' and %u more", c->weak, c->n_weak - 1);
        return false;
    case VF_WALL_LOGIN:
        /* A password field is also a sidebar's login box: alone it decides
         * only a page that is little more than the form. */
        if (s->password && s->chars < VF_WALL_TINY_CHARS)
            return fire(why, whylen, "password field over %zu characters of main text", s->chars);
        if (s->password && (c->title || c->text) && s->chars < VF_WALL_SMALL_CHARS)
            return fire(why, whylen, "password field with %s '%s'", c->title ? "title" : "text",
                        c->title ? c->title : c->text);
        if (c->weak_signal && s->chars < VF_WALL_TINY_CHARS)
            return fire(why, whylen, "signal %s", c->weak_signal);
        return title_rule(c, s, c->text || s->password || c->weak_signal, why, whylen) ||
               text_rule(c, s, VF_WALL_SHORT_CHARS, why, whylen);
    case VF_WALL_SOFT_404:
        return title_rule(c, s, c->text != NULL, why, whylen) || text_rule(c, s, VF_WALL_SHORT_CHARS, why, whylen);
    case VF_WALL_JS_REQUIRED:
        /* "Enable JavaScript" is also a help page's title: alone it decides
         * only a page that says little else. */
        if (c->text && (s->chars < 150 || (c->weak_signal && s->chars < 400)))
            return fire(why, whylen, "text '%s'", c->text);
        if (c->weak_signal && s->chars < 250)
            return fire(why, whylen, "signal %s over %zu characters of main text", c->weak_signal, s->chars);
        return false;
    default:
        return false;
    }
}

static const vf_wall order[] = {
    VF_WALL_BOT_CHALLENGE, VF_WALL_RATE_LIMITED, VF_WALL_ACCESS_DENIED, VF_WALL_CONSENT,
    VF_WALL_LOGIN, VF_WALL_PAYWALL, VF_WALL_SOFT_404, VF_WALL_JS_REQUIRED,
};

vf_wall vf_wall_judge(const vf_wall_lexicon *lx, const vf_page_evidence *ev, int http_status,
                      const char *text, size_t text_len, size_t chars, unsigned disabled,
                      char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    if (!lx)
        return VF_WALL_NONE;
    cues c[VF_WALL_COUNT];
    memset(c, 0, sizeof c);
    gather_signals(ev, c);
    if (ev && (ev->title || ev->h1)) {
        gather_titles(lx, ev->title, c);
        gather_titles(lx, ev->h1, c);
    } else if (text) {
        /* No markup to ask (plain text, a provider's text): the first line
         * stands in for the heading. */
        size_t n = strcspn(text, "\n");
        char line[FIRST_LINE_BYTES + 1];
        n = n > FIRST_LINE_BYTES ? FIRST_LINE_BYTES : n;
        while (n > 0 && n < text_len && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
        memcpy(line, text, n);
        line[n] = '\0';
        gather_titles(lx, line, c);
    }
    gather_text(lx, text ? text : "", text ? text_len : 0, c);
    shape s = {
        .chars = chars,
        .chrome = ev && ev->page_chars > 0 && ev->page_chars >= 3 * chars + 300,
        .password = ev && ev->password_field,
        .status = http_status,
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        vf_wall w = order[i];
        if (disabled & VF_WALL_BIT(w))
            continue;
        if (decide(w, &c[w], &s, why, whylen))
            return w;
    }
    return VF_WALL_NONE;
}
