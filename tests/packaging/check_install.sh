#!/usr/bin/env bash
# `meson install` into a scratch DESTDIR puts every deliverable where the
# units, man pages and Debian package expect it.
# Usage: check_install.sh BUILD SBINDIR BINDIR LIBEXECDIR MANDIR UNITDIR SYSUSERSDIR DATADIR
set -euo pipefail
build=$1 sbindir=$2 bindir=$3 libexecdir=$4 mandir=$5 unitdir=$6 sysusersdir=$7 datadir=$8
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null

fail=0
want() {  # test-flag path
  if test "$1" "$dest$2"; then echo "ok   $2"; else echo "FAIL missing or wrong type: $2"; fail=1; fi
}
want -x "$sbindir/verifetchd"
want -x "$bindir/verifetch"
want -x "$libexecdir/verifetch/verifetch-worker"
want -f "$mandir/man8/verifetchd.8"
want -f "$mandir/man1/verifetch.1"
want -f "$mandir/man5/verifetch.conf.5"
want -f "$unitdir/verifetch.socket"
want -f "$unitdir/verifetch.service"
want -f "$sysusersdir/verifetch.conf"
want -f "$datadir/doc/verifetch/examples/verifetch.conf.example"
for api in firecrawl tavily jina scrapingbee zyte zyte-browser; do
  want -f "$datadir/doc/verifetch/examples/providers/$api.conf"
done

svc="$dest$unitdir/verifetch.service"
if [ -f "$svc" ]; then
  exec_line=$(grep '^ExecStart=' "$svc")
  case "$exec_line" in
    "ExecStart=$sbindir/verifetchd --config "*) echo "ok   $exec_line" ;;
    *) echo "FAIL ExecStart does not name the installed daemon: $exec_line"; fail=1 ;;
  esac
  if grep -q '@[A-Z]*@' "$svc"; then echo "FAIL placeholder left in the installed unit"; fail=1; fi
fi
# The worker the daemon looks for by default is the one installed.
# (no grep -q: an early exit would SIGPIPE strings and trip pipefail)
if ! strings "$dest$sbindir/verifetchd" | grep -xF "$libexecdir/verifetch/verifetch-worker" >/dev/null; then
  echo "FAIL verifetchd's built-in worker path is not $libexecdir/verifetch/verifetch-worker"; fail=1
fi
exit $fail
