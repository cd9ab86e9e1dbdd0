#!/bin/sh
# End-to-end check of the chronocache-sim binary on a real trace (ctest chronocache_sim_e2e):
# the table's LRU figures equal the reference simulators' (README of ../shared/data/traces), the
# CSV has a row per run, the PNG starts with the PNG signature, and bad flags exit with status 2.
# usage: sim_e2e_test.sh SIM_BINARY TRACES_DIR WORK_DIR
set -eu
sim=$1
traces=$2
work=$3
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$sim" "$traces/lirs/cpp.trace.gz" --name lirs_cpp --policies lru,s3fifo --sizes 61,612 \
  --csv "$work/cpp.csv" --png "$work/cpp.png" --progress no >"$work/cpp.txt"
cat "$work/cpp.txt"
grep -q "^# lirs_cpp: text, 9047 requests, 1223 unique keys" "$work/cpp.txt" || fail "summary line"
# README: LRU 19.35 % at 61 objects, 85.87 % at 612.
grep -Eq "^ +61 +19\.35 " "$work/cpp.txt" || fail "LRU at 61 is not 19.35"
grep -Eq "^ +612 +85\.87 " "$work/cpp.txt" || fail "LRU at 612 is not 85.87"
[ "$(wc -l <"$work/cpp.csv")" -eq 5 ] || fail "CSV should have a header and 4 rows"
grep -q "^lirs_cpp,lru,61,9047,1751," "$work/cpp.csv" || fail "CSV row for lru@61"
[ "$(head -c 8 "$work/cpp.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] ||
  fail "PNG signature"

status=0
"$sim" "$traces/lirs/cpp.trace.gz" --no-such-flag >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "a bad flag should exit with 2, got $status"
status=0
"$sim" "$work/missing.trace" >/dev/null 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "a missing trace should exit with 1, got $status"
echo "chronocache-sim end-to-end: OK"
