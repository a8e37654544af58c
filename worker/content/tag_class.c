#include "worker/content/tag_class.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define D VF_TAG_DROP
#define C VF_TAG_CHROME
#define B VF_TAG_BLOCK
#define P VF_TAG_PARA
#define F VF_TAG_FORMAT
#define H VF_TAG_HEADING
#define L VF_TAG_LIST
#define V VF_TAG_VOID

static const struct {
    const char *name;
    uint16_t flags;
    uint8_t id, level;
} tags[] = {
    {"script", D, VF_T_SCRIPT, 0}, {"style", D, 0, 0}, {"template", D, 0, 0},
    {"noscript", D, VF_T_NOSCRIPT, 0}, {"svg", D, 0, 0}, {"math", 0, 0, 0},
    {"iframe", D, 0, 0}, {"object", D, 0, 0}, {"embed", D | V, 0, 0}, {"canvas", D, 0, 0},
    {"video", D, 0, 0}, {"audio", D, 0, 0}, {"map", D, 0, 0}, {"head", D | B, VF_T_HEAD, 0},
    {"title", D | B, VF_T_TITLE, 0}, {"meta", D | V, VF_T_META, 0}, {"link", D | V, VF_T_LINK, 0},
    {"base", D | V, VF_T_BASE, 0}, {"param", D | V, 0, 0}, {"track", D | V, 0, 0},
    {"source", D | V, VF_T_SOURCE, 0}, {"datalist", D, 0, 0}, {"frameset", D, 0, 0},
    {"frame", D, 0, 0}, {"applet", D, 0, 0},
    {"nav", C | B, 0, 0}, {"header", C | B, 0, 0}, {"footer", C | B, 0, 0},
    {"aside", C | B, 0, 0}, {"form", C | B, VF_T_FORM, 0}, {"button", C, 0, 0},
    {"select", C, 0, 0}, {"option", C | B, 0, 0}, {"optgroup", C | B, 0, 0},
    {"dialog", C | B, 0, 0}, {"menu", C | B | L, 0, 0}, {"input", C | V, VF_T_INPUT, 0},
    {"textarea", C | B, VF_T_TEXTAREA, 0}, {"label", 0, 0, 0}, {"fieldset", B, 0, 0},
    {"legend", B, 0, 0}, {"output", 0, 0, 0}, {"progress", C, 0, 0}, {"meter", C, 0, 0},
    {"html", B, VF_T_HTML, 0}, {"body", B, VF_T_BODY, 0}, {"main", B, VF_T_MAIN, 0},
    {"article", B, VF_T_ARTICLE, 0}, {"section", B, VF_T_SECTION, 0}, {"div", B, VF_T_DIV, 0},
    {"p", B | P, VF_T_P, 0}, {"pre", B | P, VF_T_PRE, 0},
    {"blockquote", B | P, VF_T_BLOCKQUOTE, 0}, {"address", B, VF_T_ADDRESS, 0},
    {"figure", B, VF_T_FIGURE, 0}, {"figcaption", B, VF_T_FIGCAPTION, 0},
    {"details", B, VF_T_DETAILS, 0}, {"summary", B, VF_T_SUMMARY, 0}, {"center", B, 0, 0},
    {"hgroup", B, 0, 0}, {"search", C | B, 0, 0},
    {"h1", B | H, VF_T_H1, 1}, {"h2", B | H, VF_T_H2, 2}, {"h3", B | H, VF_T_H3, 3},
    {"h4", B | H, VF_T_H4, 4}, {"h5", B | H, VF_T_H5, 5}, {"h6", B | H, VF_T_H6, 6},
    {"ul", B | L, VF_T_UL, 0}, {"ol", B | L, VF_T_OL, 0}, {"li", B, VF_T_LI, 0},
    {"dl", B, VF_T_DL, 0}, {"dt", B, VF_T_DT, 0}, {"dd", B, VF_T_DD, 0},
    {"table", B, VF_T_TABLE, 0}, {"caption", B, VF_T_CAPTION, 0}, {"thead", B, VF_T_THEAD, 0},
    {"tbody", B, VF_T_TBODY, 0}, {"tfoot", B, VF_T_TFOOT, 0}, {"tr", B, VF_T_TR, 0},
    {"td", P, VF_T_TD, 0}, {"th", 0, VF_T_TH, 0}, {"colgroup", D, 0, 0}, {"col", D | V, 0, 0},
    {"hr", B | V, VF_T_HR, 0}, {"br", V, VF_T_BR, 0}, {"wbr", V | F, VF_T_WBR, 0},
    {"img", V, VF_T_IMG, 0}, {"picture", 0, VF_T_PICTURE, 0}, {"area", D | V, 0, 0},
    {"a", 0, VF_T_A, 0}, {"span", 0, VF_T_SPAN, 0}, {"time", 0, VF_T_TIME, 0},
    {"code", F, VF_T_CODE, 0}, {"b", F, 0, 0}, {"i", F, 0, 0}, {"em", F, 0, 0},
    {"strong", F, 0, 0}, {"u", F, 0, 0}, {"s", F, 0, 0}, {"strike", F, 0, 0}, {"del", F, 0, 0},
    {"ins", F, 0, 0}, {"sub", F, 0, 0}, {"sup", F, 0, 0}, {"small", F, 0, 0}, {"big", F, 0, 0},
    {"mark", F, 0, 0}, {"abbr", F, 0, 0}, {"acronym", F, 0, 0}, {"q", F, 0, 0}, {"kbd", F, 0, 0},
    {"samp", F, 0, 0}, {"var", F, 0, 0}, {"tt", F, 0, 0}, {"cite", F, 0, 0}, {"dfn", F, 0, 0},
    {"font", F, 0, 0}, {"bdi", F, 0, 0}, {"bdo", F, 0, 0}, {"ruby", F, 0, 0}, {"rt", F, 0, 0},
    {"rp", D, 0, 0}, {"data", F, 0, 0}, {"nobr", F, 0, 0},
};

#define SLOTS 512u /* power of two, well above 2x the table */

static uint8_t slot_of[SLOTS];   /* index + 1 into tags[]; 0 = empty */
/* Built once per process; pthread_once because the benchmark's floor
 * extracts pages on 16 threads at once. */
static pthread_once_t built = PTHREAD_ONCE_INIT;

static uint32_t hash_name(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void build(void)
{
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        uint32_t h = hash_name(tags[i].name, strlen(tags[i].name)) & (SLOTS - 1);
        while (slot_of[h] != 0)
            h = (h + 1) & (SLOTS - 1);
        slot_of[h] = (uint8_t)(i + 1);
    }
}

#define N_TAGS (sizeof tags / sizeof tags[0])
_Static_assert(N_TAGS <= VF_TAG_INDEX_MAX, "name ids above the table are per page");

uint16_t vf_tag_index(const char *name)
{
    pthread_once(&built, build);
    size_t n = strnlen(name, 16);
    if (n == 0 || n >= 16)
        return 0;
    uint32_t h = hash_name(name, n) & (SLOTS - 1);
    while (slot_of[h] != 0) {
        size_t i = slot_of[h] - 1u;
        if (strcmp(tags[i].name, name) == 0)
            return (uint16_t)(i + 1);
        h = (h + 1) & (SLOTS - 1);
    }
    return 0;
}

vf_tag_info vf_tag_at(uint16_t index)
{
    vf_tag_info info = { 0, VF_T_OTHER, 0 };
    if (index == 0 || index > N_TAGS)
        return info;
    info.flags = tags[index - 1].flags | VF_TAG_KNOWN;
    info.id = tags[index - 1].id;
    info.level = tags[index - 1].level;
    return info;
}

const char *vf_tag_name_at(uint16_t index)
{
    return index == 0 || index > N_TAGS ? NULL : tags[index - 1].name;
}

vf_tag_info vf_tag_lookup(const char *name)
{
    return vf_tag_at(vf_tag_index(name));
}
