#!/usr/bin/env bash
# Compiles every header under src/ on its own (a header must include what it uses) and rejects
# includes that point up the layer stack of docs/architecture.md:
#   cache.h, sharded_cache.h -> policy/ table/ expiry/ memory/ -> clock/ -> base/
#   server: session.h, server.h -> commands/ -> store/ resp/ config/ ; net/ alone; never engine -> server
#   persistence/: snapshot files on the engine; the engine never includes it
#   sim/: a client of the engine, like the server; the two never see each other
#   testing/: helpers for unit tests; only *_test.cc files include it
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${CXX:-c++}
status=0

# Folders each layer may include from (besides itself). An entry of "" means: the top-level files.
declare -A allowed=(
  [base]="base"
  [clock]="base clock"
  [expiry]="base clock expiry"
  [memory]="base memory"
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
  # The engine never sees the server; inside the server, net/ and resp/ never see each other
  # and neither sees commands/ (ARCHITECTURE.md).
  case "$header" in
    src/chronocache/*) pattern='#include "(server|sim|persistence)/' ;;
    src/persistence/*) pattern='#include "(server|sim)/' ;;
    src/sim/*) pattern='#include "server/' ;;
    src/server/net/*) pattern='#include "server/(resp|commands|store|config)/|#include "server/[a-z_]+\.h"' ;;
    src/server/resp/*) pattern='#include "server/(net|commands|store|config)/|#include "server/[a-z_]+\.h"' ;;
    src/server/config/*) pattern='#include "server/(net|resp|commands|store)/|#include "server/[a-z_]+\.h"' ;;
    src/server/store/*) pattern='#include "server/(net|resp|commands|config)/|#include "server/[a-z_]+\.h"' ;;
    src/server/commands/*) pattern='#include "server/(net/|session\.h|server\.h)|#include "sim/' ;;
    src/server/*) pattern='#include "sim/' ;;
    *) pattern='' ;;
  esac
  if [ -n "$pattern" ] && grep -qE "$pattern" "$header"; then
    echo "layering: $header includes $(grep -oE "$pattern[^\"]*" "$header" | head -1) (see docs/architecture.md)"
    status=1
  fi
  if ! echo "#include \"${header#src/}\"" | "$cxx" -std=c++20 -Isrc -fsyntax-only -x c++ - ; then
    echo "not self-contained: $header"
    status=1
  fi
done < <(find src -name '*.h' | sort)

# src/testing/ is for unit tests only: nothing that ships may include it.
if shipped=$(grep -rlE '#include "testing/' src --include='*.h' --include='*.cc' |
             grep -vE '_test\.cc$|^src/testing/'); then
  echo "layering: shipped code includes src/testing/: $shipped"
  status=1
fi

[ $status -eq 0 ] && echo "check-headers: $(find src -name '*.h' | wc -l) headers self-contained, layering respected"
exit $status
