#!/usr/bin/env bash
# Every manual page renders with groff's warnings on (-ww) and without a
# single diagnostic, has a NAME line whatis can index, and renders through man.
# Usage: check_man.sh MAN_DIR
set -euo pipefail
dir=${1:?man dir}
command -v groff >/dev/null || { echo "groff not installed: skipping"; exit 77; }
export LC_ALL=C.UTF-8 MANWIDTH=80

fail=0
pages=("$dir"/verifetchd.8 "$dir"/verifetch.1 "$dir"/verifetch.conf.5)
for page in "${pages[@]}"; do
  name=$(basename "$page")
  before=$fail
  if [ ! -f "$page" ]; then echo "FAIL $name is missing"; fail=1; continue; fi
  diag=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || { echo "FAIL $name: groff exit $?"; fail=1; }
  if [ -n "$diag" ]; then echo "FAIL $name: groff diagnostics:"; echo "$diag"; fail=1; fi
  if command -v man >/dev/null; then
    rendered=$(man --warnings -l "$page" 2>"${TMPDIR:-/tmp}/vf-man-$$.err" | col -b) || true
    err=$(cat "${TMPDIR:-/tmp}/vf-man-$$.err"); rm -f "${TMPDIR:-/tmp}/vf-man-$$.err"
    if [ -n "$err" ]; then echo "FAIL $name: man diagnostics:"; echo "$err"; fail=1; fi
    for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
      grep -q "^$section" <<<"$rendered" || { echo "FAIL $name: no $section section"; fail=1; }
    done
  fi
  if command -v lexgrog >/dev/null; then
    lexgrog "$page" >/dev/null 2>&1 || { echo "FAIL $name: lexgrog cannot parse the NAME section"; fail=1; }
  fi
  # The .TH section must match the file suffix (man8 <- .8).
  th=$(awk '/^\.TH/ { print $3; exit }' "$page")
  [ "$th" = "${name##*.}" ] || { echo "FAIL $name: .TH says section $th"; fail=1; }
  if [ "$fail" = "$before" ]; then echo "ok   $name"; fi
done

# JSON in a macro line keeps its quotes (a bare " is groff's argument quote,
# so an unescaped example silently loses them).
if command -v man >/dev/null; then
  json=$(MANWIDTH=200 man -l "$dir/verifetchd.8" 2>/dev/null | col -bx | tr -s " ")
  for want in '{"error": {"field": ..., "message": ...}}' '{"status": "ok", "confinement": {...}}'; do
    grep -qF "$want" <<<"$json" || { echo "FAIL verifetchd.8: JSON example not rendered as written: $want"; fail=1; }
  done
fi

# Cross-references between the pages point at pages that exist.
while read -r ref; do
  case "$ref" in verifetch*) [ -f "$dir/$ref" ] || { echo "FAIL reference to missing page $ref"; fail=1; } ;; esac
done < <(grep -ho '^\.BR [a-z.]* ([158])' "${pages[@]}" | awk '{print $2 "." substr($3, 2, 1)}' | sort -u)

# Negative control: a page with an unknown macro must be caught.
bad=$(mktemp)
printf '.TH BAD 1\n.SH NAME\nbad \\- bad\n.NOSUCHMACRO\n' >"$bad"
if [ -z "$(groff -man -Tutf8 -ww -z "$bad" 2>&1)" ]; then
  echo "FAIL groff -ww did not report an unknown macro; this check proves nothing"; fail=1
fi
rm -f "$bad"
exit $fail
