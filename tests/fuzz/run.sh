#!/usr/bin/env bash
# Build every libFuzzer target with clang (ASan + UBSan) and run each for
# FUZZ_SECONDS (default 60). Every target runs; the script then exits
# non-zero if any of them found something (crash, sanitizer report, leak,
# an input slower than FUZZ_TIMEOUT seconds, out of memory). Each target's
# full log is $OUT/<target>.log and its reproducer lands in
# $OUT/artifacts-<target>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=${FUZZ_OUT:-build-fuzz}
mkdir -p "$OUT"
CFLAGS=(-std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I.)

build() {
  local name=$1; shift
  clang "${CFLAGS[@]}" "$@" -o "$OUT/$name"
}
build fuzz_ipc_decode tests/ipc/fuzz_ipc_decode.c ipc/*.c $(pkg-config --cflags --libs msgpack)
build fuzz_redact tests/text/fuzz_redact.c broker/judge/redact*.c broker/judge/secret_spelling.c broker/judge/classify.c broker/judge/utf8_text.c \
  broker/judge/safe_text.c \
  broker/judge/wall.c broker/judge/wall_judge.c broker/judge/wall_phrases*.c broker/judge/text_fold.c -lpcre2-8 -lutf8proc
build fuzz_redact_linear tests/text/fuzz_redact_linear.c $(ls broker/judge/redact*.c | grep -v redact_page) \
  broker/judge/secret_spelling.c -lpcre2-8 -lutf8proc
build fuzz_request tests/fuzz/fuzz_request.c broker/api/request.c broker/judge/safe_text.c broker/lookup/url_ascii.c \
  policy/host_idna.c $(pkg-config --cflags --libs jansson libcurl libidn2)
build fuzz_html tests/fuzz/fuzz_html.c worker/content/*.c ipc/ipc_page_meta.c ipc/ipc_decode.c ipc/ipc_rules.c \
  $(pkg-config --cflags --libs libxml-2.0 icu-uc jansson msgpack libutf8proc)

[ -n "${FUZZ_BUILD_ONLY:-}" ] && { echo "fuzz: built"; exit 0; }
# One input may run at most this long: a hang is a finding, reported within
# the stage instead of after libFuzzer's default 20 minutes.
TIMEOUT_EACH=${FUZZ_TIMEOUT:-20}
findings=()
for t in fuzz_ipc_decode fuzz_redact fuzz_redact_linear fuzz_request fuzz_html; do
  echo "== $t: ${SECONDS_EACH}s"
  mkdir -p "$OUT/corpus-$t" "$OUT/artifacts-$t"
  # The exit status is libFuzzer's own (not a filter's): non-zero is a finding.
  rc=0
  "$OUT/$t" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT_EACH" -rss_limit_mb=1024 -malloc_limit_mb=512 \
    -print_final_stats=1 -artifact_prefix="$OUT/artifacts-$t/" "$OUT/corpus-$t" >"$OUT/$t.log" 2>&1 || rc=$?
  grep -E "stat::number_of_executed_units|ERROR|SUMMARY|Done" "$OUT/$t.log" || true
  if [ "$rc" -ne 0 ]; then
    echo "$t: finding (exit $rc); log $OUT/$t.log, reproducer in $OUT/artifacts-$t/:"
    tail -n 30 "$OUT/$t.log"
    findings+=("$t")
  fi
done
if [ "${#findings[@]}" -gt 0 ]; then
  echo "fuzz: findings in ${findings[*]}"
  exit 1
fi
echo "fuzz: all targets clean"
