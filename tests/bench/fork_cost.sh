#!/bin/sh
# Interleaved rounds of the fork-cost probe: full (the worker's libraries) vs lean.
set -eu
for round in 1 2 3; do
  "$1" full
  "$2" lean
done
