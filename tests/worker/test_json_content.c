/* JSON response mode: RFC 6901 pointers over provider answers. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "worker/content/json_content.h"

typedef struct {
    vf_json_status st;
    char *text;
    size_t len;
    char detail[512];
} outcome;

static outcome run(const char *body, const char *pointer)
{
    outcome o;
    o.st = vf_json_extract(body, strlen(body), pointer, 1 << 20, &o.text, &o.len, o.detail,
                           sizeof o.detail);
    return o;
}

static const char *doc = "{\"data\":{\"content\":\"the page\",\"n\":42,\"ok\":true,\"z\":null,"
                         "\"list\":[\"zero\",\"one\",{\"deep\":\"two\"}],"
                         "\"a/b\":\"slash\",\"m~n\":\"tilde\",\"\":\"empty key\"}}";

Test(json_pointer, nested_members)
{
    outcome o = run(doc, "/data/content");
    cr_assert_eq(o.st, VF_JSON_OK);
    cr_assert_str_eq(o.text, "the page");
    cr_assert_eq(o.len, 8);
    free(o.text);
}

Test(json_pointer, escapes)
{
    outcome o = run(doc, "/data/a~1b");
    cr_assert_eq(o.st, VF_JSON_OK);
    cr_assert_str_eq(o.text, "slash");
    free(o.text);
    o = run(doc, "/data/m~0n");
    cr_assert_eq(o.st, VF_JSON_OK);
    cr_assert_str_eq(o.text, "tilde");
    free(o.text);
    o = run(doc, "/data/");
    cr_assert_eq(o.st, VF_JSON_OK);
    cr_assert_str_eq(o.text, "empty key");
    free(o.text);
    o = run(doc, "/data/m~2n");
    cr_assert_eq(o.st, VF_JSON_BAD_POINTER);
    cr_assert_null(o.text);
}

Test(json_pointer, array_indices)
{
    outcome o = run(doc, "/data/list/1");
    cr_assert_eq(o.st, VF_JSON_OK);
    cr_assert_str_eq(o.text, "one");
    free(o.text);
    o = run(doc, "/data/list/2/deep");
    cr_assert_eq(o.st, VF_JSON_OK);
    cr_assert_str_eq(o.text, "two");
    free(o.text);
    cr_assert_eq(run(doc, "/data/list/3").st, VF_JSON_NOT_FOUND);
    cr_assert_eq(run(doc, "/data/list/01").st, VF_JSON_NOT_FOUND);
    cr_assert_eq(run(doc, "/data/list/-").st, VF_JSON_NOT_FOUND);
    cr_assert_eq(run(doc, "/data/list/99999999999999999999999").st, VF_JSON_NOT_FOUND);
}

Test(json_pointer, wrong_types_name_the_type)
{
    outcome o = run(doc, "/data/n");
    cr_assert_eq(o.st, VF_JSON_WRONG_TYPE);
    cr_assert_str_eq(o.detail, "json pointer '/data/n' is a number, not a string");
    o = run(doc, "/data/ok");
    cr_assert_str_eq(o.detail, "json pointer '/data/ok' is a boolean, not a string");
    o = run(doc, "/data/z");
    cr_assert_str_eq(o.detail, "json pointer '/data/z' is null, not a string");
    o = run(doc, "/data/list");
    cr_assert_str_eq(o.detail, "json pointer '/data/list' is an array, not a string");
    o = run(doc, "");
    cr_assert_str_eq(o.detail, "json pointer '' is an object, not a string");
}

Test(json_pointer, missing_member)
{
    outcome o = run(doc, "/x");
    cr_assert_eq(o.st, VF_JSON_NOT_FOUND);
    cr_assert_str_eq(o.detail, "json pointer '/x' not found");
    o = run(doc, "/data/content/more");
    cr_assert_eq(o.st, VF_JSON_NOT_FOUND);
}

Test(json_pointer, not_json)
{
    outcome o = run("<html>nope</html>", "/data");
    cr_assert_eq(o.st, VF_JSON_NOT_JSON);
    cr_assert_str_eq(o.detail, "response is not JSON");
    cr_assert_eq(run("{\"a\":1} trailing", "/a").st, VF_JSON_NOT_JSON);
    cr_assert_eq(run("", "").st, VF_JSON_NOT_JSON);
}

Test(json_pointer, deep_nesting_is_refused_not_crashed)
{
    size_t depth = 100000;
    char *s = malloc(2 * depth + 1);
    memset(s, '[', depth);
    memset(s + depth, ']', depth);
    s[2 * depth] = '\0';
    outcome o = run(s, "");
    cr_assert_eq(o.st, VF_JSON_NOT_JSON);
    free(s);
}

Test(json_pointer, whole_document_string_and_nul_dropped)
{
    outcome o = run("\"a\\u0000b\"", "");
    cr_assert_eq(o.st, VF_JSON_OK);
    cr_assert_str_eq(o.text, "ab");
    cr_assert_eq(o.len, 2);
    free(o.text);
}

Test(json_pointer, output_cut_on_character_boundary)
{
    const char *body = "{\"t\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}";
    char *text;
    size_t len;
    char detail[128];
    cr_assert_eq(vf_json_extract(body, strlen(body), "/t", 5, &text, &len, detail, sizeof detail),
                 VF_JSON_OK);
    cr_assert_str_eq(text, "\xc3\xa9\xc3\xa9");
    free(text);
}
