#include "bench_judge.h"

#include <stdbool.h>
#include <stdio.h>

#include "broker/judge/classify.h"
#include "broker/judge/page_evidence.h"
#include "broker/judge/receipt.h"
#include "broker/judge/redact.h"
#include "broker/judge/utf8_text.h"

#include "bench_answer.h"

#define MUST_CONTAIN "Paragraph 0:"

static vf_redactor *redactor;
static vf_classifier *classifier;

int bench_judge_setup(char *err, size_t errlen)
{
    redactor = vf_redactor_new(NULL, 0, err, errlen);
    classifier = redactor ? vf_classifier_new(NULL, 0, err, errlen) : NULL;
    return classifier ? 0 : -1;
}

void bench_judge_teardown(void)
{
    vf_classifier_free(classifier);
    vf_redactor_free(redactor);
    classifier = NULL;
    redactor = NULL;
}

size_t bench_judge_page(const char *url, const char *ctype, long status, vf_extracted *ex,
                        const vf_wall_signals *walls, size_t min_chars, char *err, size_t errlen)
{
    for (size_t i = 0; ex->has_meta && i < walls->n; i++)
        (void)vf_page_meta_add_signal(&ex->meta, walls->tok[i]);
    if (!vf_utf8_is_clean(ex->text, ex->text_len)) {
        snprintf(err, errlen, "floor: extracted text is not clean UTF-8");
        return 0;
    }
    vf_page_evidence ev;
    vf_classify_input in = { .http_status = (int)status, .content_type = ctype, .text = ex->text,
                             .text_len = ex->text_len, .must_contain = MUST_CONTAIN, .min_chars = 1,
                             .page = vf_page_evidence_from_meta(ex->has_meta ? &ex->meta : NULL, &ev) };
    vf_attempt_record rec = { .provider = "direct", .http_status = (int)status };
    size_t chars = 0;
    rec.outcome = vf_classify(classifier, &in, rec.detail, sizeof rec.detail, &chars);
    if (rec.outcome != VF_OUTCOME_OK || chars < min_chars) {
        snprintf(err, errlen, "floor: page judged unusable (%s, %zu chars)", rec.detail, chars);
        return 0;
    }
    vf_receipt_input rin = { .url = url, .max_attempts = 1, .providers_available = 1, .log = &rec,
                             .n_attempts = 1, .provider_used = "direct", .failure = VF_FAIL_NONE,
                             .content_chars = chars, .text = ex->text, .text_len = ex->text_len,
                             .final_url = url, .tenant = "bench", .order_reason = "static" };
    json_t *doc = vf_tool_result_build(&rin, redactor);
    bool success = false;
    size_t len = doc ? bench_answer_write(doc, &success) : 0;
    if (!len || !success) {
        snprintf(err, errlen, "floor: answer could not be built");
        return 0;
    }
    return len;
}
