#include "broker/api/tool_spec.h"

#include "broker/api/request.h"

static json_t *prop(const char *type, const char *description)
{
    return json_pack("{s:s, s:s}", "type", type, "description", description);
}

/* How the page text comes back: its form and which part of it. ("extract"
 * and "links" are accepted too but not advertised: the main-content pick
 * falls back to the whole page by itself, and inline links are the default
 * a model reads best.) */
static void add_page_props(json_t *props)
{
    json_t *format = prop("string", "Page text as Markdown (headings, lists, tables, links) or plain text.");
    json_object_set_new(format, "enum", json_pack("[s,s]", "markdown", "text"));
    json_object_set_new(format, "default", json_string("markdown"));
    json_object_set_new(props, "format", format);
    json_t *max_chars = prop("integer", "At most this many characters of page text per call; "
                                        "a longer page is cut on a paragraph or sentence boundary.");
    json_object_set_new(max_chars, "minimum", json_integer(1));
    json_object_set_new(max_chars, "maximum", json_integer(VF_MAX_MAX_CHARS));
    json_object_set_new(max_chars, "default", json_integer(VF_DEFAULT_MAX_CHARS));
    json_object_set_new(props, "max_chars", max_chars);
    json_t *start = prop("integer", "Character offset to continue from: the receipt's next_start_index "
                                    "of the previous call.");
    json_object_set_new(start, "minimum", json_integer(0));
    json_object_set_new(start, "default", json_integer(0));
    json_object_set_new(props, "start_index", start);
}

json_t *vf_tool_spec(unsigned attempt_ceiling)
{
    json_t *props = json_object();
    json_object_set_new(props, "url", prop("string", "Absolute http:// or https:// URL of the page to fetch."));
    json_object_set_new(props, "must_contain",
                        prop("string", "Text the page must contain to count as usable; matched ignoring case, "
                                       "Unicode compatibility forms, quote/dash styles and whitespace runs."));
    json_t *mode = prop("string", "\"folded\" (default) or \"exact\" (byte-for-byte) matching of must_contain.");
    json_object_set_new(mode, "enum", json_pack("[s,s]", "folded", "exact"));
    json_object_set_new(mode, "default", json_string("folded"));
    json_object_set_new(props, "must_contain_mode", mode);
    json_t *min_chars = prop("integer", "Minimum characters of main content for the page to count as usable.");
    json_object_set_new(min_chars, "minimum", json_integer(0));
    json_object_set_new(min_chars, "default", json_integer(VF_DEFAULT_MIN_CHARS));
    json_object_set_new(props, "min_chars", min_chars);
    json_t *attempts = prop("integer", "How many providers may be tried; clamped to the operator's ceiling.");
    json_object_set_new(attempts, "minimum", json_integer(1));
    json_object_set_new(attempts, "maximum", json_integer(attempt_ceiling));
    json_object_set_new(props, "max_attempts", attempts);
    add_page_props(props);

    json_t *schema = json_pack("{s:s, s:o, s:[s], s:b}", "type", "object", "properties", props,
                               "required", "url", "additionalProperties", 0);
    return json_pack("{s:s, s:s, s:{s:o}}", "name", "verified_web_lookup", "description",
                     "Fetch a web page and report, in a machine-readable receipt, whether the content "
                     "is actually usable (not a cookie wall, empty page or error). The first content "
                     "block is the receipt; the second is the page text or a LOOKUP FAILED line.",
                     "inputSchema", "json", schema);
}
