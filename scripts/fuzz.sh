#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, -DSTAGEGATE_FUZZ=ON, clang with ASan and UBSan) in
# build-fuzz and runs each for a bounded time from its committed seed corpus (fuzz/corpus/NAME)
# and dictionary (fuzz/NAME.dict, when there is one). Fails when any target finds a crash, a leak,
# a timeout or an out-of-memory, and prints the reproducer's path and the command that replays it.
#
#   scripts/fuzz.sh [TARGET...]     every target when none is named (see fuzz/README.md)
#
# Environment: FUZZ_SECONDS (each target's time, default 30), FUZZ_JOBS (targets run at once,
# default the number of cores). Inputs that found new coverage are kept in build-fuzz/corpus/NAME
# and read again by the next run; findings go to build-fuzz/findings/NAME/, logs to
# build-fuzz/logs/NAME.log.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-30}"
jobs="${FUZZ_JOBS:-$(nproc)}"
all=(sse_parser openai_stream prometheus scenario corpus rubric import_jsonl import_csv trace
  corpus_import dataset tokenizer recorded_answers)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi

missing=()
while read -r package; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done < scripts/fuzz-packages.txt
if [ ${#missing[@]} -ne 0 ]; then
  echo "fuzz.sh needs clang and libFuzzer: apt-get install ${missing[*]}" >&2
  exit 2
fi

source scripts/ccache.sh
# -O1 with assertions on: an assert that input can reach is a finding too. Without precompiled
# headers, so that one build checks that the input library's sources include what they use.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DSTAGEGATE_FUZZ=ON -DSTAGEGATE_TESTS=OFF -DSTAGEGATE_PCH=OFF \
  "${launcher[@]}" > /dev/null
cmake --build build-fuzz --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# Runs one target; the fuzzer's exit status goes to build-fuzz/logs/NAME.status.
run_target() {
  local name="$1"
  local corpus="build-fuzz/corpus/$name" findings="build-fuzz/findings/$name"
  mkdir -p "$corpus" "$findings" build-fuzz/logs
  local options=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10
                 -print_final_stats=1 -artifact_prefix="$findings/")
  if [ -f "fuzz/$name.dict" ]; then options+=(-dict="fuzz/$name.dict"); fi
  local status=0
  "build-fuzz/fuzz_$name" "${options[@]}" "$corpus" "fuzz/corpus/$name" \
    > "build-fuzz/logs/$name.log" 2>&1 || status=$?
  echo "$status" > "build-fuzz/logs/$name.status"
}

# One line per target: its runs, speed and coverage, or what it found and how to replay it.
report_target() {
  local name="$1" status="$2" log="build-fuzz/logs/$1.log"
  local runs speed
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    printf '%-14s ok      %9s runs %7s exec/s  %s\n' "$name" "${runs:-?}" "${speed:-?}" \
      "$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9/a-zA-Z]*' "$log" | tail -1)"
    return
  fi
  local reproducer
  reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  printf '%-14s FAILED (exit %s) after %s runs\n' "$name" "$status" "${runs:-?}"
  # What was found: an uncaught exception, undefined behaviour, a broken property, a sanitizer's
  # or libFuzzer's report (leak, timeout, out-of-memory, signal).
  grep -E 'what\(\):|runtime error|fuzz property failed|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|^SUMMARY' \
    "$log" | head -4 | sed 's/^ *//; s/^/    /'
  echo "    log: $log"
  if [ -n "$reproducer" ]; then
    echo "    reproducer: $reproducer"
    echo "    replay: build-fuzz/fuzz_$name $reproducer"
  fi
}

mkdir -p build-fuzz/logs
running=0
for name in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  echo "fuzzing $name for ${seconds}s" >&2
  rm -f "build-fuzz/logs/$name.status"
  run_target "$name" &
  running=$((running + 1))
done
wait

echo
failed=0
for name in "${targets[@]}"; do
  status=$(cat "build-fuzz/logs/$name.status" 2>/dev/null || echo 1)
  report_target "$name" "$status"
  if [ "$status" -ne 0 ]; then failed=1; fi
done
exit "$failed"
