#include "broker/api/lookup_log.h"

#include <stdlib.h>
#include <time.h>

#include "broker/log_limit.h"

static json_t *timestamp(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char day[32], buf[48];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, sizeof buf, "%s.%03dZ", day, (int)(ts.tv_nsec / 1000000));
    return json_string(buf);
}

/* One write per line so concurrent lookups never interleave inside a line. */
static void emit(FILE *to, json_t *line)
{
    char *text = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    if (!text)
        return;
    fprintf(to, "%s\n", text);
    fflush(to);
    free(text);
}

void vf_lookup_log(FILE *to, const char *tenant, const json_t *tool_result, int64_t duration_ms)
{
    json_t *content = json_object_get(tool_result, "content");
    json_t *receipt = json_object_get(json_array_get(content, 0), "json");
    json_t *outcomes = json_array();
    json_t *log = json_object_get(receipt, "attempts_log");
    size_t i;
    json_t *a;
    json_array_foreach(log, i, a) {
        json_array_append_new(outcomes, json_pack("{s:O, s:O}", "provider", json_object_get(a, "provider"),
                                                  "outcome", json_object_get(a, "outcome")));
    }
    json_t *line = json_pack("{s:o, s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:o, s:I}", "ts", timestamp(),
                             "event", "lookup", "tenant", tenant ? tenant : "",
                             "url", json_object_get(receipt, "url") ? json_object_get(receipt, "url") : json_null(),
                             "status", json_object_get(tool_result, "status"),
                             "attempts", json_object_get(receipt, "attempts"),
                             "provider_used", json_object_get(receipt, "provider_used"),
                             "failure_reason", json_object_get(receipt, "failure_reason"),
                             "outcomes", outcomes, "duration_ms", (json_int_t)duration_ms);
    if (line)
        emit(to, line);
}

void vf_lookup_log_hit(FILE *to, const char *tenant, const char *redacted_url, int64_t duration_ms)
{
    json_t *line = json_pack("{s:o, s:s, s:s, s:s?, s:s, s:s, s:I}", "ts", timestamp(), "event", "lookup", "tenant",
                             tenant ? tenant : "", "url", redacted_url, "status", "success", "cache", "hit",
                             "duration_ms", (json_int_t)duration_ms);
    if (line)
        emit(to, line);
}

void vf_request_log(FILE *to, const char *tenant, const char *event, const char *detail)
{
    if (!vf_log_limit_take(event))
        return;
    json_t *line = json_pack("{s:o, s:s, s:s, s:s}", "ts", timestamp(), "event", event, "tenant",
                             tenant ? tenant : "", "detail", detail ? detail : "");
    if (line)
        emit(to, line);
}

void vf_log_summaries(FILE *to, bool force)
{
    vf_log_summary due[VF_LOG_KINDS];
    size_t n = vf_log_limit_due(due, VF_LOG_KINDS, force);
    for (size_t i = 0; i < n; i++) {
        char detail[96];
        snprintf(detail, sizeof detail, "%u similar messages suppressed", due[i].suppressed);
        json_t *line = json_pack("{s:o, s:s, s:s, s:i, s:s}", "ts", timestamp(), "event", "log_suppressed",
                                 "kind", due[i].kind, "suppressed", (int)due[i].suppressed, "detail", detail);
        if (line)
            emit(to, line);
    }
}
