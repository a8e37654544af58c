/* What an HTML element is to the extractor, found in O(1): a hash of the
 * (already lowercased) tag name into a small open-addressed table. */
#ifndef VERIFETCH_WORKER_TAG_CLASS_H
#define VERIFETCH_WORKER_TAG_CLASS_H

#include <stdint.h>

enum {
    VF_TAG_DROP      = 1u << 0,  /* never page text: script, style, svg, iframe, template... */
    VF_TAG_CHROME    = 1u << 1,  /* page furniture: nav, header, footer, aside, form, button... */
    VF_TAG_BLOCK     = 1u << 2,  /* starts and ends a line */
    VF_TAG_PARA      = 1u << 3,  /* a paragraph-like leaf the scorer counts */
    VF_TAG_FORMAT    = 1u << 4,  /* inline formatting that never separates words (b, i, em...) */
    VF_TAG_HEADING   = 1u << 5,
    VF_TAG_LIST      = 1u << 6,  /* ul, ol, menu */
    VF_TAG_VOID      = 1u << 7,  /* br, img, hr, input...: no content */
    VF_TAG_KNOWN     = 1u << 8,  /* in the table at all (unknown = custom element) */
};

typedef enum {
    VF_T_OTHER = 0, VF_T_A, VF_T_ARTICLE, VF_T_BLOCKQUOTE, VF_T_BODY, VF_T_BR, VF_T_CODE,
    VF_T_DD, VF_T_DIV, VF_T_DL, VF_T_DT, VF_T_FORM, VF_T_H1, VF_T_H2, VF_T_H3, VF_T_H4, VF_T_H5,
    VF_T_H6, VF_T_HEAD, VF_T_HR, VF_T_HTML, VF_T_IMG, VF_T_INPUT, VF_T_LI, VF_T_MAIN, VF_T_META,
    VF_T_LINK, VF_T_NOSCRIPT, VF_T_OL, VF_T_P, VF_T_PRE, VF_T_SECTION, VF_T_TABLE, VF_T_TD,
    VF_T_TH, VF_T_TR, VF_T_TITLE, VF_T_UL, VF_T_TIME, VF_T_CAPTION, VF_T_FIGCAPTION, VF_T_THEAD,
    VF_T_TBODY, VF_T_TFOOT, VF_T_TEXTAREA, VF_T_BASE, VF_T_SPAN, VF_T_FIGURE, VF_T_PICTURE,
    VF_T_SOURCE, VF_T_WBR, VF_T_DETAILS, VF_T_SUMMARY, VF_T_ADDRESS, VF_T_SCRIPT,
} vf_tag_id;

typedef struct {
    uint16_t flags;
    uint8_t id;      /* vf_tag_id */
    uint8_t level;   /* headings: 1..6 */
} vf_tag_info;

/* name as libxml2's HTML parser gives it (lowercase); unknown names get
 * flags 0 and id VF_T_OTHER. */
vf_tag_info vf_tag_lookup(const char *name);

/* The same table by position, for the tree's name ids: vf_tag_index gives
 * 1 + the position of a known name, 0 for an unknown one; ids above
 * VF_TAG_INDEX_MAX are never table positions. */
#define VF_TAG_INDEX_MAX 255u
uint16_t vf_tag_index(const char *name);
vf_tag_info vf_tag_at(uint16_t index);
const char *vf_tag_name_at(uint16_t index);

#endif
