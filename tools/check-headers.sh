#!/usr/bin/env bash
# Compiles every header under src/ on its own: a header must include what it uses. The include
# graph itself (layering, no cycles, .h and .cc alike) is tools/check_layering.py's, run here too
# and by every build.
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${CXX:-c++}
status=0

python3 tools/check_layering.py || status=1

while IFS= read -r header; do
  if ! echo "#include \"${header#src/}\"" | "$cxx" -std=c++20 -Isrc -fsyntax-only -x c++ - ; then
    echo "not self-contained: $header"
    status=1
  fi
done < <(find src -name '*.h' | sort)

[ $status -eq 0 ] && echo "check-headers: $(find src -name '*.h' | wc -l) headers self-contained"
exit $status
