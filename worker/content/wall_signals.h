/* Wall fingerprints the broker's verdict weighs, found by the worker: a few
 * response headers (cf-mitigated, x-amzn-waf-action, ...) and vendor markup
 * in the raw HTML (challenge scripts, CMP loaders, paywall schema, password
 * inputs, empty app roots). Output is data only: short printable-ASCII
 * tokens such as "hdr:cf-mitigated=challenge" or "mk:datadome-captcha";
 * the broker decides what they mean. */
#ifndef VERIFETCH_WALL_SIGNALS_H
#define VERIFETCH_WALL_SIGNALS_H

#include <stddef.h>

#define VF_WALL_SIGNALS_MAX 32u   /* = VF_META_MAX_SIGNALS */
#define VF_WALL_SIGNAL_LEN 64u    /* = VF_META_MAX_TOKEN */
/* Bytes of HTML scanned; vendor walls are small and CMP/paywall markup sits
 * in the head, so a bounded prefix suffices and keeps the cost fixed. */
#define VF_WALL_SCAN_BYTES (512u * 1024u)

typedef struct {
    char tok[VF_WALL_SIGNALS_MAX][VF_WALL_SIGNAL_LEN + 1];
    size_t n;
} vf_wall_signals;

/* NULL-terminated allowlist of response header names worth reporting. */
extern const char *const vf_wall_header_names[];

/* Adds a token unless present, full, empty or longer than VF_WALL_SIGNAL_LEN. */
void vf_wall_signals_add(vf_wall_signals *s, const char *tok);

/* Token for one allowlisted header; values are reduced to [a-z0-9.-], at
 * most 24 bytes, and kept only where they carry meaning (cf-mitigated...). */
void vf_wall_signals_from_header(vf_wall_signals *s, const char *name, const char *value);

/* Markup fingerprints in the first VF_WALL_SCAN_BYTES of html. */
void vf_wall_signals_scan_html(vf_wall_signals *s, const char *html, size_t len);

#endif
