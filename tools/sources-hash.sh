#!/usr/bin/env bash
# One hash of the code a run used (rmpeer/, suites/, matrices/, conftest.py), from file
# contents alone: the same on this machine and on a lent GPU machine holding a copy of it.
cd "$(dirname "$0")/.." || exit 1
find rmpeer suites matrices conftest.py -type f \( -name '*.py' -o -name '*.yaml' \) -not -path '*/__pycache__/*' \
  | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16
