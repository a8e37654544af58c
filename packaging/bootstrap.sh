#!/usr/bin/env bash
# Install Debian 12 build/test dependencies and build verifetch into ./build.
# Usage: packaging/bootstrap.sh [extra meson setup args...]
set -euo pipefail
cd "$(dirname "$0")/.."

DEPS=(
  meson ninja-build pkg-config gcc clang libclang-rt-14-dev
  libcurl4-openssl-dev libseccomp-dev libmsgpack-dev libpcre2-dev libcriterion-dev
  libmicrohttpd-dev libjansson-dev libxml2-dev libicu-dev libconfig-dev libssl-dev libutf8proc-dev libidn2-dev
  openssl ca-certificates python3 curl procps
  systemd groff-base man-db python3-yaml binutils
  libhiredis-dev redis-server
  uidmap
  dpkg-dev make libzstd-dev libbrotli-dev zlib1g-dev
  liblzma-dev libstdc++-12-dev   # static libxml2's and ICU's own needs (-Dworker_static)
)
# node + npm run the MCP/TypeScript client tests with the real npm clients;
# a machine that already has node (e.g. from another source) keeps it.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || DEPS+=(nodejs npm)
missing=()
for p in "${DEPS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The worker's libcurl, built for http/https over OpenSSL only from Debian's
# curl source (packaging/lean_curl.sh; the README says why). Set
# VERIFETCH_LEAN_CURL=0 to link the worker against the system libcurl instead.
setup_args=()
if [ "${VERIFETCH_LEAN_CURL:-1}" = 1 ]; then
  bash packaging/lean_curl.sh build-deps/curl-lean
  # ...and, with it, static copies of the worker's other libraries (the README says why).
  setup_args+=("-Dworker_curl=$PWD/build-deps/curl-lean" -Dworker_static=true)
fi

BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" "${setup_args[@]}" "$@" >/dev/null
fi
ninja -C "$BUILD_DIR" >/dev/null
echo "built into $BUILD_DIR/"
