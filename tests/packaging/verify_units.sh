#!/usr/bin/env bash
# systemd-analyze verify + an offline security review of the verifetch units.
# Usage: verify_units.sh PACKAGING_DIR      Exit 77 (skip) without systemd-analyze.
set -euo pipefail
pkg=${1:?packaging dir}
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed: skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/units" "$tmp/sbin" "$tmp/man/man1" "$tmp/man/man5" "$tmp/man/man8"
# verify insists ExecStart= names an executable; a stub keeps this test about
# the units, not about whether the daemon linked.
printf '#!/bin/sh\nexit 0\n' >"$tmp/sbin/verifetchd"
chmod +x "$tmp/sbin/verifetchd"
sed -e "s|@SBINDIR@|$tmp/sbin|g" -e "s|@SYSCONFDIR@|/etc|g" \
  "$pkg/systemd/verifetch.service.in" >"$tmp/units/verifetch.service"
cp "$pkg/systemd/verifetch.socket" "$tmp/units/"
# Documentation=man:... must resolve, to our own pages.
for page in "$pkg"/man/*.[0-9]; do
  ln -s "$page" "$tmp/man/man${page##*.}/"
done
export MANPATH="$tmp/man"

fail=0
check() {  # name, then command: fails on a nonzero exit or any output
  local name=$1; shift
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  if [ $rc -ne 0 ] || [ -n "$out" ]; then
    echo "FAIL $name (exit $rc):"; echo "$out"; fail=1
  else
    echo "ok   $name"
  fi
}

if grep -q '@[A-Z]*@' "$tmp/units/verifetch.service"; then
  echo "FAIL: unsubstituted placeholder in verifetch.service.in"; fail=1
fi
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID$' "$tmp/units/verifetch.service" ||
  { echo "FAIL: verifetch.service has no ExecReload= (systemctl reload must send SIGHUP)"; fail=1; }
check "verify units" systemd-analyze verify "$tmp/units/verifetch.socket" "$tmp/units/verifetch.service"

# The harness must be able to see a broken unit, or a pass means nothing.
cp "$tmp/units/verifetch.service" "$tmp/broken.service"
printf '\n[Service]\nNoSuchSetting=1\nExecStart=relative/path\n' >>"$tmp/broken.service"
if out=$(systemd-analyze verify "$tmp/broken.service" 2>&1) && [ -z "$out" ]; then
  echo "FAIL: systemd-analyze verify accepted a broken unit; this check proves nothing"; fail=1
else
  echo "ok   broken unit is reported"
fi

# Offline exposure review: 2.0 today; fail if a change makes it worse than 2.5.
if ! out=$(systemd-analyze security --offline=yes --threshold=25 "$tmp/units/verifetch.service" 2>&1); then
  echo "FAIL security exposure above 2.5:"; echo "$out" | grep -E '✗|Overall'; fail=1
else
  echo "ok   $(echo "$out" | grep 'Overall exposure')"
fi

# Settings whose absence or presence would break the daemon at run time.
svc="$tmp/units/verifetch.service"
want_line() {
  if grep -qx "$1" "$2"; then echo "ok   $(basename "$2"): $1"; else echo "FAIL $(basename "$2") lacks: $1"; fail=1; fi
}
want_line 'RestrictNamespaces=user net pid ipc mnt' "$svc"    # workers unshare these
want_line 'CapabilityBoundingSet=' "$svc"
want_line 'NoNewPrivileges=yes' "$svc"
want_line 'ProtectSystem=strict' "$svc"
want_line 'Accept=no' "$tmp/units/verifetch.socket"           # one daemon, not one per connection
if grep -Eq '^MemoryDenyWriteExecute=(yes|true|1)' "$svc"; then
  echo "FAIL MemoryDenyWriteExecute breaks the PCRE2 JIT"; fail=1
fi
listen=$(grep -c '^Listen' "$tmp/units/verifetch.socket")
if [ "$listen" -ne 1 ] || ! grep -q '^ListenStream=/' "$tmp/units/verifetch.socket"; then
  echo "FAIL verifetch.socket must have exactly one ListenStream=/path (verifetchd takes LISTEN_FDS=1)"; fail=1
fi
exit $fail
