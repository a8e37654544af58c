#!/usr/bin/env bash
# Build every libFuzzer target with clang (ASan + UBSan) and run each for
# FUZZ_SECONDS (default 60). Exits non-zero on the first finding.
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
  broker/judge/wall.c broker/judge/wall_judge.c broker/judge/wall_phrases*.c broker/judge/text_fold.c -lpcre2-8 -lutf8proc
build fuzz_redact_linear tests/text/fuzz_redact_linear.c $(ls broker/judge/redact*.c | grep -v redact_page) \
  broker/judge/secret_spelling.c -lpcre2-8 -lutf8proc
build fuzz_request tests/fuzz/fuzz_request.c broker/api/request.c broker/judge/safe_text.c broker/lookup/url_ascii.c \
  policy/host_idna.c $(pkg-config --cflags --libs jansson libcurl libidn2)
build fuzz_html tests/fuzz/fuzz_html.c worker/content/*.c ipc/ipc_page_meta.c ipc/ipc_decode.c ipc/ipc_rules.c \
  $(pkg-config --cflags --libs libxml-2.0 icu-uc jansson msgpack libutf8proc)

[ -n "${FUZZ_BUILD_ONLY:-}" ] && { echo "fuzz: built"; exit 0; }
for t in fuzz_ipc_decode fuzz_redact fuzz_redact_linear fuzz_request fuzz_html; do
  echo "== $t: ${SECONDS_EACH}s"
  mkdir -p "$OUT/corpus-$t"
  "$OUT/$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=1024 -malloc_limit_mb=512 -print_final_stats=1 \
    "$OUT/corpus-$t" 2>&1 | grep -E "stat::number_of_executed_units|ERROR|SUMMARY|Done" || true
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "$t: finding"; exit 1; }
done
echo "fuzz: all targets clean"
