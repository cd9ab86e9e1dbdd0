#!/usr/bin/env bash
# Compiles every header under src/ on its own: a header must include what it uses. The include
# graph itself (layering, no cycles, .h and .cc alike) is tools/check_layering.py's, run here too
# and by every build. One compiler per core (CHECK_HEADERS_JOBS to change it): the headers are
# independent, and one at a time took two minutes of make test.
set -euo pipefail
cd "$(dirname "$0")/.."
export CXX=${CXX:-c++}
jobs=${CHECK_HEADERS_JOBS:-$(nproc)}
status=0

python3 tools/check_layering.py || status=1

check_one() {
  if ! echo "#include \"${1#src/}\"" | "$CXX" -std=c++20 -Isrc -fsyntax-only -x c++ -; then
    echo "not self-contained: $1"
    return 1
  fi
}
export -f check_one

find src -name '*.h' | sort | xargs -P "$jobs" -I{} bash -c 'check_one "$1"' _ {} || status=1

[ $status -eq 0 ] && echo "check-headers: $(find src -name '*.h' | wc -l) headers self-contained"
exit $status
