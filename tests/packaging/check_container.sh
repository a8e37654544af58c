#!/usr/bin/env bash
# The Containerfile's runtime stage installs the Debian package of every shared
# library the built binaries link directly (their DT_NEEDED entries), so the
# slim image cannot start with a missing library. No container engine needed.
# Usage: check_container.sh CONTAINERFILE BUILD_ROOT      Exit 77 without dpkg.
set -euo pipefail
containerfile=${1:?Containerfile}
build=${2:?build root}
if ! command -v dpkg >/dev/null || ! command -v readelf >/dev/null; then
  echo "needs dpkg and readelf: skipping"; exit 77
fi

# Packages named in the apt-get install of the stage after the last FROM.
# shellcheck disable=SC1003  # the tr set holds a literal backslash
runtime_pkgs=$(awk '/^FROM /{buf=""} {buf = buf $0 "\n"} END{printf "%s", buf}' "$containerfile" |
  sed -n '/apt-get install/,/rm -rf/p' | tr -s '[:space:]\\' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' |
  grep -vxE 'apt-get|install|rm|DEBIAN_FRONTEND=noninteractive|&&' | sort -u)
# In debian:12-slim already (essential), so never listed.
base="libc6 libgcc-s1"

fail=0
# dpkg -S reads the whole package database on each call, and ldd loads every
# dependency: run each once per binary, not once per library (under load the
# per-library form took over a minute).
owners() {  # "path pkg" lines for every path a package owns
  dpkg -S "$@" 2>/dev/null | sed -n 's|^\([^:,]*\).*: \(/.*\)$|\2 \1|p' || true
}
for bin in broker/verifetchd cli/verifetch worker/verifetch-worker; do
  path="$build/$bin"
  if [ ! -x "$path" ]; then echo "FAIL $bin is not built"; fail=1; continue; fi
  ldd_out=$(ldd "$path")
  needed=$(readelf -d "$path" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  declare -A file_of=()
  candidates=()
  for lib in $needed; do
    # Sanitizer runtimes appear only in the CI's ASan/UBSan build.
    case "$lib" in libasan.so*|libubsan.so*|liblsan.so*|libtsan.so*) continue ;; esac
    # Resolve the soname the way the dynamic loader does for this binary.
    # (ldd names the dynamic loader by its path alone, when a binary needs it by name.)
    file=$(awk -v l="$lib" '$1 == l { print $3 } $2 ~ /^\(0x/ && $1 ~ ("/" l "$") { print $1 }' <<<"$ldd_out")
    file_of[$lib]=$file
    [ -n "$file" ] && candidates+=("$file" "$(readlink -f "$file")" "${file#/usr}" "/usr$file")
  done
  owned=$( ((${#candidates[@]})) && owners "${candidates[@]}" )
  for lib in $needed; do
    case "$lib" in libasan.so*|libubsan.so*|liblsan.so*|libtsan.so*) continue ;; esac
    file=${file_of[$lib]}
    [ -n "$file" ] || { echo "FAIL $bin: $lib does not resolve"; fail=1; continue; }
    real=$(readlink -f "$file")
    pkg=""
    for cand in "$file" "$real" "${file#/usr}" "/usr$file"; do
      pkg=$(awk -v f="$cand" '$1 == f { print $2; exit }' <<<"$owned")
      [ -n "$pkg" ] && break
    done
    if [ -z "$pkg" ]; then echo "FAIL $bin: no package owns $file"; fail=1; continue; fi
    if grep -qxF "$pkg" <<<"$runtime_pkgs" || [[ " $base " == *" $pkg "* ]]; then
      echo "ok   $bin: $lib ($pkg)"
    else
      echo "FAIL $bin needs $lib from $pkg, which the runtime stage does not install"; fail=1
    fi
  done
  unset file_of
done
grep -qx 'ca-certificates' <<<"$runtime_pkgs" || { echo "FAIL runtime stage lacks ca-certificates"; fail=1; }
exit $fail
