#!/usr/bin/env bash
# Runs each libFuzzer target of a fuzz build (IBRR_FUZZ=ON) for SECONDS on a copy of its committed corpus
# (tests/fuzz/corpus/<target>, copied into BUILD_DIR/fuzz/corpus so the committed one never changes) and
# fails if any of them finds a crash, a leak, a timeout or an out-of-memory input. The CI step of
# `./ibrr.sh test`; docs/testing.md ("Fuzzing") has the longer runs.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]   (targets: all by default)
# Crashing inputs are kept in BUILD_DIR/fuzz/artifacts, each run's log in BUILD_DIR/fuzz/logs. A libFuzzer run
# takes one core: IBRR_JOBS of them (default: all cores) run side by side, and their results print in target order.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_DIR="${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}"
SECONDS_EACH="${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}"
shift 2
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(manifest mesh store lightmap matrix view_script cli_numbers)

# The longest input each target is given: files of the size its seeds have, so that an execution stays
# short and no input is large enough to need gigabytes legitimately.
max_len() {
  case "$1" in
    mesh) echo 16384 ;;
    store) echo 16384 ;;
    lightmap | matrix) echo 8192 ;;
    cli_numbers) echo 256 ;;
    *) echo 4096 ;;
  esac
}

# Leaks inside Assimp are its own (lsan.supp says which); every other leak fails the run.
export LSAN_OPTIONS="suppressions=$HERE/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

OUT="$BUILD_DIR/fuzz"
mkdir -p "$OUT/artifacts" "$OUT/logs" "$OUT/status"
JOBS="${IBRR_JOBS:-$(nproc)}"
for target in "${TARGETS[@]}"; do
  [ -x "$OUT/fuzz_$target" ] || { echo "run_fuzzers.sh: $OUT/fuzz_$target is missing; build the target ibrr_fuzzers" >&2; exit 1; }
done

# One target's run: its exit status goes to $OUT/status/<target>.
run_target() {
  local target="$1" corpus="$OUT/corpus/$1"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp "$HERE/corpus/$target/"* "$corpus/"
  local options=(-max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 -max_len="$(max_len "$target")"
                 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target-")
  [ -f "$HERE/dict/$target.dict" ] && options+=(-dict="$HERE/dict/$target.dict")
  local status=0
  "$OUT/fuzz_$target" "${options[@]}" "$corpus" >"$OUT/logs/$target.log" 2>&1 || status=$?
  echo "$status" >"$OUT/status/$target"
}

running=0
for target in "${TARGETS[@]}"; do
  rm -f "$OUT/status/$target"
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
wait

failed=()
for target in "${TARGETS[@]}"; do
  log="$OUT/logs/$target.log"
  if [ "$(cat "$OUT/status/$target" 2>/dev/null || echo missing)" = 0 ]; then
    # The last status line: executions, coverage, corpus.
    summary="$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)"
    echo "fuzz_$target: ok ($SECONDS_EACH s) ${summary}"
  else
    echo "fuzz_$target: FAILED; the end of $log:" >&2
    tail -n 40 "$log" >&2
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers.sh: failed: ${failed[*]} (crashing inputs in $OUT/artifacts)" >&2
  exit 1
fi
