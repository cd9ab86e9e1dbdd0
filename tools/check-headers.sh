#!/usr/bin/env bash
# Compiles every header under src/ on its own (a header must include what it uses) and rejects
# includes that point up the layer stack of docs/architecture.md:
#   cache.h, sharded_cache.h -> policy/ table/ expiry/ -> clock/ -> base/
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${CXX:-c++}
status=0

# Folders each layer may include from (besides itself). An entry of "" means: the top-level files.
declare -A allowed=(
  [base]="base"
  [clock]="base clock"
  [expiry]="base clock expiry"
  [policy]="base policy"
  [table]="base clock expiry table"
)

while IFS= read -r header; do
  rel=${header#src/chronocache/}
  layer=${rel%%/*}
  [ "$layer" = "$rel" ] && layer=""
  if [ -n "$layer" ] && [ -n "${allowed[$layer]:-}" ]; then
    while IFS= read -r inc; do
      target=${inc#chronocache/}
      target_layer=${target%%/*}
      [ "$target_layer" = "$target" ] && target_layer="(top)"
      case " ${allowed[$layer]} " in
        *" $target_layer "*) ;;
        *) echo "layering: $header includes $inc (a $layer/ file may use: ${allowed[$layer]})"; status=1 ;;
      esac
    done < <(grep -oE '#include "chronocache/[^"]+"' "$header" | sed -E 's/#include "(.*)"/\1/')
  fi
  if ! echo "#include \"${header#src/}\"" | "$cxx" -std=c++20 -Isrc -fsyntax-only -x c++ - ; then
    echo "not self-contained: $header"
    status=1
  fi
done < <(find src -name '*.h' | sort)

[ $status -eq 0 ] && echo "check-headers: $(find src -name '*.h' | wc -l) headers self-contained, layering respected"
exit $status
