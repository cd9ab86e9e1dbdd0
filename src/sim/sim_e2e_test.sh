#!/bin/sh
# End-to-end check of the chronocache-sim binary (ctest chronocache_sim_e2e) on a trace this
# script writes, so the right answers are known by construction: the summary line's counts, the
# table's LRU figures, the CSV's hit count, and exit status 2 for a bad flag,
# 1 for a missing trace.
#
# The trace (LIRS text, gzip-compressed, 1,400 requests over 100 keys):
#   phase 1: keys 1..100 in a loop, 10 rounds;  phase 2: keys 1..40 in a loop, 10 rounds.
# LRU with 50 slots: a loop of 100 keys never hits (each key was evicted 50 requests before it
# comes back); after phase 1 the cache holds 51..100, so phase 2's first round misses and its 9
# other rounds hit: 360 hits, 25.71 %. With 100 slots everything after the first 100 requests
# hits: 1,300 hits, 92.86 %.
# usage: sim_e2e_test.sh SIM_BINARY WORK_DIR
set -eu
sim=$1
work=$2
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

trace="$work/phases.trace.gz"
awk 'BEGIN {
  for (r = 0; r < 10; r++) for (k = 1; k <= 100; k++) print k
  print "*"
  for (r = 0; r < 10; r++) for (k = 1; k <= 40; k++) print k
}' | gzip -c >"$trace"

"$sim" "$trace" --name phases --policies lru,s3fifo --sizes 50,100 \
  --csv "$work/phases.csv" --progress no >"$work/phases.txt"
cat "$work/phases.txt"
grep -q "^# phases: text, 1400 requests, 100 unique keys" "$work/phases.txt" || fail "summary line"
grep -Eq "^ +50 +25\.71 " "$work/phases.txt" || fail "LRU at 50 is not 25.71"
grep -Eq "^ +100 +92\.86 " "$work/phases.txt" || fail "LRU at 100 is not 92.86"
[ "$(wc -l <"$work/phases.csv")" -eq 5 ] || fail "CSV should have a header and 4 rows"
grep -q "^phases,lru,50,1400,360," "$work/phases.csv" || fail "CSV row for lru@50"
grep -q "^phases,lru,100,1400,1300," "$work/phases.csv" || fail "CSV row for lru@100"
# Any policy holding all 100 keys misses only the first request of each.
grep -q "^phases,s3fifo,100,1400,1300," "$work/phases.csv" || fail "CSV row for s3fifo@100"

status=0
"$sim" "$trace" --no-such-flag >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "a bad flag should exit with 2, got $status"
status=0
"$sim" "$work/missing.trace" >/dev/null 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "a missing trace should exit with 1, got $status"
echo "chronocache-sim end-to-end: OK"
