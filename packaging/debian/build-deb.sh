#!/usr/bin/env bash
# Build the verifetch .deb packages from a clean copy of the source tree.
# Usage: packaging/debian/build-deb.sh [OUTDIR]      (default: ./build-deb, git-ignored)
# Installs missing build dependencies with apt-get (as root or via sudo).
# The copy holds the files git knows about plus untracked, non-ignored ones,
# so build directories and other local debris never reach the package.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$src/build-deb}" && cd "${1:-$src/build-deb}" && pwd)
version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$src/packaging/debian/changelog")

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=""
apt_install() {
  [ -n "$apt_updated" ] || { as_root apt-get update -qq; apt_updated=1; }
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# dpkg-buildpackage and debhelper themselves, then whatever control asks for.
need=()
for p in dpkg-dev debhelper; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree="$work/verifetch-$version"
mkdir -p "$tree"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
     tar --null -T - -cf -) | tar -xf - -C "$tree"
else
  tar -C "$src" --exclude='./build' --exclude='./build-*' --exclude='./build-deb' --exclude='.git' -cf - . |
    tar -xf - -C "$tree"
fi
# dpkg-buildpackage wants debian/ at the top of the source tree.
rm -rf "$tree/debian"
cp -a "$tree/packaging/debian" "$tree/debian"

# "Unmet build dependencies: a b (>= 1.0) c | d" -> "a b c"
unmet=$( (cd "$tree" && dpkg-checkbuilddeps 2>&1) |
        sed -n 's/.*Unmet build dependencies: //p' | sed 's/([^)]*)//g; s/ *| *[^ ]*//g' || true)
if [ -n "$unmet" ]; then
  echo "installing build dependencies: $unmet"
  # shellcheck disable=SC2086  # word splitting intended: a package list
  apt_install $unmet
fi

(cd "$tree" && dpkg-buildpackage -us -uc -b)
find "$work" -maxdepth 1 -type f \( -name '*.deb' -o -name '*.buildinfo' -o -name '*.changes' \) \
  -exec cp {} "$out/" \;
echo "built into $out:"
ls -1 "$out"/*.deb

# Installing must not start the daemon: only the socket is started, the
# service waits for its first connection (socket activation).
post=$(mktemp -d)
dpkg-deb -e "$(ls -1 "$out"/verifetch_*.deb | head -1)" "$post"
if grep -qE "deb-systemd-invoke.*verifetch\.service" "$post/postinst"; then
  echo "build-deb: postinst starts verifetch.service at install" >&2
  exit 1
fi
grep -qE "deb-systemd-invoke.*verifetch\.socket" "$post/postinst" || { echo "build-deb: postinst does not start verifetch.socket" >&2; exit 1; }
rm -rf "$post"
