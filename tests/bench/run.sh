#!/bin/sh
# Run the verifetch benchmark against an existing build (this builds nothing).
#   tests/bench/run.sh [BUILD_DIR [JSON_OUT]] [verifetch-bench options, e.g. --scale 0.5]
# BUILD_DIR defaults to ./build, JSON_OUT to BUILD_DIR/bench.json.
# To build first: meson setup build && ninja -C build
set -eu
build=build
json=
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then build=$1; shift; fi
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then json=$1; shift; fi
[ "${1:-}" = "--" ] && shift
json=${json:-$build/bench.json}
bench=$build/tests/bench/verifetch-bench
if [ ! -x "$bench" ]; then
    echo "run.sh: $bench not found; build first: meson setup $build && ninja -C $build" >&2
    exit 2
fi
exec "$bench" --build "$build" --json "$json" "$@"
