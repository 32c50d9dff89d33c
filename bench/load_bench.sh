#!/usr/bin/env bash
# Benchmarks of the load engine (`stagegate profile`), with one command:
#   bench/load_bench.sh
# 1. Overhead: streamed chunks per client CPU-second. nginx (core 0) serves a static 128-token
#    OpenAI-style stream (bench/load/) to stagegate, then to a plain Python asyncio/aiohttp client
#    (bench/aiohttp_client.py), each on core 1 with 64 streams, alternately, RUNS times.
# 2. Accuracy: 1,000 (RUNS times) and 100 concurrent streams from the sim at a token every 40 ms,
#    with the sim's ground truth (`X-Sim-Timestamps: on`, GET /sim/ground-truth): how late the
#    client stamps each token chunk, first token included (= |measured TTFT - true TTFT|);
#    each run by default (the kernel's receive times), then with --receive-times read (stamped
#    when the client read them, as most clients do).
# 3. Schedule: Poisson arrivals at 500 to 4,000 requests/s, 2,000 requests each, against the sim's
#    fast profile: offered vs achieved rate and schedule lag, RUNS times.
# 4. Memory: 10,000 concurrent streams (bench/profiles/hold.yaml): the client's peak resident set.
# Loopback only; every load is bounded in time (under 4 minutes in all). 2 and 3 run the server
# and the client at real-time priority (chrt -f) when allowed, so that other work on a shared
# machine does not preempt them (RT=0 turns this off); 3 is also run once without it.
# Environment: STAGEGATE=path uses that binary instead of building; RESULTS=dir keeps the raw
# results; RUNS (3), DURATION (6 s, section 1), STREAMS (10,000, section 4).
# Exits non-zero only when something cannot be set up or run; a missed target is printed MISSED.
set -euo pipefail
cd "$(dirname "$0")/.."

for package in nginx-light curl time python3-aiohttp; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package"; }
done
if [ -z "${STAGEGATE:-}" ]; then
  scripts/install-deps.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF > /dev/null
  cmake --build build --target stagegate > /dev/null
fi

RUNS=${RUNS:-3}
DURATION=${DURATION:-6}
RT=${RT:-1}
STREAMS=${STREAMS:-10000}
work=$(mktemp -d)
results=$work/results
mkdir -p "$results"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "${RESULTS:-}" ]; then mkdir -p "$RESULTS" && cp -r "$results"/. "$RESULTS"/; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A private copy, so that a rebuild during the run does not change the binary under test.
cp "${STAGEGATE:-build/stagegate}" "$work/stagegate"
sg=$work/stagegate
py=/usr/bin/python3  # Debian's, which has python3-aiohttp
analyze=bench/load/analyze.py
corpus=corpus/service-desk

ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((STREAMS + 200)) ]; then
  echo "the open-files limit is $(ulimit -n); $STREAMS streams need more (raise the hard limit)" >&2
  exit 1
fi
rt=()
if [ "$RT" = 1 ] && chrt -f 10 true 2>/dev/null; then rt=(chrt -f 10); fi

wait_port() { for _ in $(seq 100); do curl -s "http://127.0.0.1:$1/$2" > /dev/null && return 0; sleep 0.05; done; return 1; }
fail() { echo "$1" >&2; [ -f "${2:-}" ] && tail -20 "$2" >&2; exit 1; }

# start_sim PORT PROFILE [prefix ...]: runs the sim in the background; sets $sim_pid.
start_sim() {
  local port=$1 profile=$2
  shift 2
  "$@" "$sg" sim --port "$port" --profile "$profile" --corpus "$corpus" > "$work/sim-$port.log" 2>&1 &
  sim_pid=$!
  pids+=("$sim_pid")
  wait_port "$port" health || fail "the sim on port $port did not start" "$work/sim-$port.log"
}
stop() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local left=()
  for pid in "${pids[@]}"; do [ "$pid" = "$1" ] || left+=("$pid"); done
  pids=("${left[@]}")
}

# profile NAME [prefix ...] -- ARGS...: one `stagegate profile` run into $work/NAME.
profile() {
  local name=$1
  shift
  local prefix=()
  while [ "$1" != "--" ]; do prefix+=("$1"); shift; done
  shift
  "${prefix[@]}" "$sg" --quiet --db "$work/runs.db" profile --workers 1 --out "$work/$name" "$@" \
    > "$work/$name.log" 2>&1 || fail "stagegate profile ($name) failed" "$work/$name.log"
}
# The whole client process's user and system CPU seconds and peak resident KiB, into a file.
timed() { echo /usr/bin/time -o "$1" -f %U,%S,%M; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "$(free -g | awk '/Mem:/{print $2}') GiB, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ ${#rt[@]} -gt 0 ] && echo "real-time priority for sections 2 and 3: ${rt[*]}" ||
  echo "no real-time priority (RT=0 or not permitted): latency figures include preemption by other work"

# --- 1. overhead ---------------------------------------------------------------------------------
mkdir -p "$work/www"
chmod a+rx "$work" "$work/www"  # nginx's workers run as www-data
bench/load/sse_body.py 128 > "$work/www/stream.txt"
sed -e "s#@WORK@#$work#g" -e "s#@PORT@#18500#g" bench/load/nginx.conf > "$work/nginx.conf"
taskset -c 0 nginx -c "$work/nginx.conf" &
nginx_pid=$!
pids+=("$nginx_pid")
wait_port 18500 stream.txt || fail "nginx did not start" "$work/nginx-error.log"
curl -s -X POST -d '{}' http://127.0.0.1:18500/v1/chat/completions | cmp -s - "$work/www/stream.txt" ||
  fail "nginx does not answer POST with the static stream"
printf '\n1. overhead: nginx (core 0) serves a 128-token stream (%d bytes); each client on core 1, 64 streams, %d s, %d runs\n' \
  "$(wc -c < "$work/www/stream.txt")" "$DURATION" "$RUNS"
for run in $(seq "$RUNS"); do
  profile "overhead-sg-$run" $(timed "$work/sg-$run.time") taskset -c 1 -- \
    --url http://127.0.0.1:18500/v1 --model static-model --concurrency 64 --duration "$DURATION"
  $py $analyze overhead-stagegate "$work/overhead-sg-$run" "$work/sg-$run.time" \
    > "$results/overhead-stagegate-$run.json"
  $(timed "$work/py-$run.time") taskset -c 1 $py bench/aiohttp_client.py --url http://127.0.0.1:18500/v1 \
    --model static-model --concurrency 64 --duration "$DURATION" --out "$work/py-$run.jsonl" \
    > "$work/py-$run.json" 2> "$work/py-$run.log" || fail "the aiohttp client failed" "$work/py-$run.log"
  $py $analyze overhead-aiohttp "$work/py-$run.json" "$work/py-$run.time" > "$results/overhead-aiohttp-$run.json"
  echo "   run $run: stagegate $(cat "$results/overhead-stagegate-$run.json")"
  echo "          aiohttp   $(cat "$results/overhead-aiohttp-$run.json")"
done
stop "$nginx_pid"

# --- 2. accuracy ---------------------------------------------------------------------------------
printf '\n2. accuracy: the sim (core 0) sends a token every 40 ms to every stream, 20 tokens each; client on core 1\n'
start_sim 18501 bench/load/stream40.yaml "${rt[@]}" taskset -c 0
truth_args=(--url http://127.0.0.1:18501/v1 --model sim-assistant --output-tokens 20
  --extra-inputs ignore_eos:true,min_tokens:20 --header 'X-Sim-Timestamps: on')
for streams in 100 1000; do
  seconds=5
  runs=1
  if [ "$streams" = 1000 ]; then seconds=10; runs=$RUNS; fi
  for run in $(seq "$runs"); do
    # By default (the kernel's receive times); then stamped when read. Every request counts,
    # the first round (which opens every connection) included.
    for mode in default read; do
      name=accuracy-$mode-$streams-$run
      mode_args=()
      [ "$mode" = read ] && mode_args=(--receive-times read)
      profile "$name" "${rt[@]}" taskset -c 1 -- "${truth_args[@]}" "${mode_args[@]}" \
        --concurrency "$streams" --duration "$seconds"
      # The log holds every request since the sim started; the analysis matches them by trace id.
      curl -sf http://127.0.0.1:18501/sim/ground-truth > "$work/truth.json" || rm -f "$work/truth.json"
      $py $analyze accuracy "$work/$name" "$work/truth.json" > "$results/$name.json"
      echo "   stagegate ($mode), $streams streams, run $run: $(cat "$results/$name.json")"
    done
  done
  "${rt[@]}" taskset -c 1 $py bench/aiohttp_client.py --url http://127.0.0.1:18501/v1 --timestamps \
    --concurrency "$streams" --duration "$seconds" --output-tokens 20 --out "$work/py-acc-$streams.jsonl" \
    > /dev/null 2> "$work/py-acc-$streams.log" || fail "the aiohttp client failed" "$work/py-acc-$streams.log"
  $py $analyze accuracy-aiohttp "$work/py-acc-$streams.jsonl" > "$results/accuracy-aiohttp-$streams.json"
  echo "   aiohttp,   $streams streams: $(cat "$results/accuracy-aiohttp-$streams.json")"
done
stop "$sim_pid"

# --- 3. schedule ---------------------------------------------------------------------------------
printf '\n3. schedule: Poisson arrivals, 2,000 requests a level, 128-token answers from the sim (fast profile, core 0); client on core 1\n'
schedule_args=(--url http://127.0.0.1:18502/v1 --model sim-assistant --request-rate 500,1000,2000,4000
  --arrival poisson --requests 2000 --output-tokens 128 --extra-inputs ignore_eos:true,min_tokens:128)
start_sim 18502 fast "${rt[@]}" taskset -c 0
for run in $(seq "$RUNS"); do
  profile "schedule-rt-$run" "${rt[@]}" taskset -c 1 -- "${schedule_args[@]}" --seed "$run"
  $py $analyze schedule "$work/schedule-rt-$run" > "$results/schedule-rt-$run.json"
  echo "   run $run: $(cat "$results/schedule-rt-$run.json")"
done
stop "$sim_pid"
if [ ${#rt[@]} -gt 0 ]; then
  start_sim 18502 fast taskset -c 0
  profile schedule-plain-1 taskset -c 1 -- "${schedule_args[@]}" --seed 1
  $py $analyze schedule "$work/schedule-plain-1" > "$results/schedule-plain-1.json"
  echo "   without real-time priority: $(cat "$results/schedule-plain-1.json")"
  stop "$sim_pid"
fi

# --- 4. memory -----------------------------------------------------------------------------------
printf '\n4. memory: %d concurrent streams of 60 tokens for 15 s (sim: bench/profiles/hold.yaml, core 0; client core 1)\n' "$STREAMS"
start_sim 18503 bench/profiles/hold.yaml taskset -c 0
running() { curl -s http://127.0.0.1:18503/metrics | awk -F'} ' '/^vllm:num_requests_running/{print $2}'; }
# Sampled every 0.5 s while the client runs: the sim's running streams, and the client's resident
# set while (nearly) all streams are open, before it writes its reports.
echo "0 0" > "$work/memory.samples"
(
  peak=0
  open_rss=0
  while true; do
    sleep 0.5
    now=$(running || true)
    now=${now%.*}
    [ "${now:-0}" -gt "$peak" ] 2>/dev/null && peak=$now
    client=$(pgrep -f -- "^$sg .*--out $work/memory " || true)
    if [ -n "$client" ] && [ "${now:-0}" -ge $((STREAMS * 95 / 100)) ] 2>/dev/null; then
      rss=$(awk '/VmRSS/{print $2}' "/proc/$client/status" 2>/dev/null || true)
      [ "${rss:-0}" -gt "$open_rss" ] && open_rss=$rss
    fi
    echo "$peak $open_rss" > "$work/memory.samples"
  done
) &
poller=$!
pids+=("$poller")
profile memory $(timed "$work/memory.time") taskset -c 1 -- --url http://127.0.0.1:18503/v1 --model sim-assistant \
  --concurrency "$STREAMS" --duration 15 --grace 20 --output-tokens 60 --extra-inputs ignore_eos:true,min_tokens:60
stop "$poller"
read -r peak open_rss < "$work/memory.samples"
$py $analyze memory "$work/memory" "$work/memory.time" "$peak" "$open_rss" > "$results/memory.json"
echo "   $(cat "$results/memory.json")"
stop "$sim_pid"

printf '\nsummary (medians over runs where repeated; "MISSED" marks a target not met)\n'
$py $analyze report "$results"
