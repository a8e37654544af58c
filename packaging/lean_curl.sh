#!/usr/bin/env bash
# Build the libcurl the worker links: Debian's own curl source package, at the
# version of the installed libcurl4-openssl-dev and with every Debian patch
# (security fixes included), configured for HTTP and HTTPS over OpenSSL only
# (plus libidn2, which the worker uses for punycode, as Debian's build does),
# as a static library. Debian's shared libcurl maps ~23 more libraries into
# every worker (LDAP, RTMP, SSH, GnuTLS, Kerberos, SASL, nghttp2...) that a
# worker never uses: each costs page faults at every fork and exit, and each is
# code an attacker who owned the parser would find mapped.
# --disable-socketpair: a multi handle (curl_easy_perform makes one) otherwise
# opens a wakeup socketpair nobody ever signals: a socketpair, four fcntl and
# two closes per worker, and a call the worker's seccomp filter would have to allow.
#
# Usage: packaging/lean_curl.sh DEST   -> DEST/lib/libcurl.a, DEST/include/curl/
# Idempotent: DEST/STAMP records the Debian version and the configure flags, so
# a Debian security update of curl (a new version) rebuilds it on the next run.
# Needs the deb-src index; adds /etc/apt/sources.list.d/verifetch-deb-src.sources
# for bookworm when apt has none.
set -euo pipefail
dest=$(mkdir -p "$1" && cd "$1" && pwd)

version=$(dpkg-query -W -f='${Version}' libcurl4-openssl-dev)
flags=(--disable-shared --enable-static --with-pic --enable-threaded-resolver
       --with-openssl --with-zlib --with-brotli --with-zstd
       --without-nghttp2 --with-libidn2 --without-librtmp --without-libssh2 --without-libssh
       --without-libpsl --without-gssapi --disable-ldap --disable-ldaps --disable-rtsp --disable-dict
       --disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smb --disable-smtp
       --disable-gopher --disable-mqtt --disable-ftp --disable-file --disable-manual --disable-ntlm
       --disable-ntlm-wb --disable-tls-srp --disable-docs --disable-socketpair
       --with-ca-path=/etc/ssl/certs --with-ca-bundle=/etc/ssl/certs/ca-certificates.crt)
stamp="curl $version ${flags[*]}"
if [ -f "$dest/STAMP" ] && [ "$(cat "$dest/STAMP")" = "$stamp" ] && [ -f "$dest/lib/libcurl.a" ]; then
  exit 0
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fetch() { apt-get source --download-only "curl=$version" >/dev/null 2>&1; }
if ! fetch; then
  # No source index yet: Debian's own archive, the same suites as the binaries.
  as_root tee /etc/apt/sources.list.d/verifetch-deb-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  as_root apt-get update -qq
  fetch || { echo "lean_curl: cannot fetch Debian's curl source $version" >&2; exit 1; }
fi
# apt checked the files against the signed Sources index; dpkg-source checks
# them against the .dsc and applies debian/patches.
dpkg-source -x curl_*.dsc src >unpack.log 2>&1 || { cat unpack.log >&2; exit 1; }
cd src
hardening="-O2 -g0 -fstack-protector-strong -fstack-clash-protection -D_FORTIFY_SOURCE=2"
./configure "${flags[@]}" CFLAGS="$hardening" CPPFLAGS="-DCURL_PATCHSTAMP=\\\"$version\\\"" >configure.log 2>&1 ||
  { tail -20 configure.log >&2; exit 1; }
make -C lib -j"$(nproc)" >make.log 2>&1 || { tail -40 make.log >&2; exit 1; }

rm -rf "$dest/lib" "$dest/include"
mkdir -p "$dest/lib" "$dest/include/curl"
cp lib/.libs/libcurl.a "$dest/lib/"
cp include/curl/*.h "$dest/include/curl/"
echo "$stamp" >"$dest/STAMP"
echo "lean libcurl $version (http, https; OpenSSL) built into $dest"
