#!/usr/bin/env bash
# Benchmarks of the reference application (`stagegate sim`), with one command:
#   bench/sim_bench.sh
# 1. Streaming throughput: the sim (fast profile, pinned to one core) streams 128-token chat
#    completions to wrk (on the other core); nginx serving the same SSE bytes as a static file is
#    measured the same way in the same run, as the well-known reference.
# 2. Open streams: 10,000 concurrent streaming connections, each a 20-token stream at 40 ms a token (bench/profiles/
#    hold.yaml); reports how many ran at once, the sim's peak memory and wrk's errors.
# Loopback only; every load is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."

for package in wrk nginx-light curl bc; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package"; }
done
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEGATE_TESTS=OFF > /dev/null
cmake --build build --target stagegate > /dev/null

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
wait_port() { for _ in $(seq 100); do curl -s "http://127.0.0.1:$1/$2" > /dev/null && return 0; sleep 0.05; done; return 1; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB"

# --- 1. streaming throughput ------------------------------------------------------------------
taskset -c 0 build/stagegate sim --port 18300 --profile fast --corpus corpus/service-desk > "$work/sim.log" &
sim=$!; pids+=("$sim")
wait_port 18300 health
mkdir -p "$work/www"
curl -s http://127.0.0.1:18300/v1/chat/completions -H 'Content-Type: application/json' \
  -d '{"model":"sim-assistant","stream":true,"max_tokens":128,"min_tokens":128,"ignore_eos":true,"messages":[{"role":"user","content":"What is phishing?"}]}' \
  > "$work/www/stream.txt"
events=$(grep -c '^data: ' "$work/www/stream.txt")
bytes=$(wc -c < "$work/www/stream.txt")

cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  default_type text/event-stream;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:18301; root $work/www; }
}
CONF
taskset -c 0 nginx -c "$work/nginx.conf" &
pids+=("$!")
wait_port 18301 stream.txt

run_wrk() {  # url script -> requests/s
  local out
  if [ -n "$2" ]; then
    out=$(taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -s "$2" "$1")
  else
    out=$(taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$1")
  fi
  echo "$out" > "$work/wrk.txt"
  echo "$out" | awk '/Requests\/sec/{print $2}'
}

before=$(cpu_ticks "$sim")
sim_rps=$(run_wrk http://127.0.0.1:18300/v1/chat/completions bench/stream.lua)
sim_errors=$(grep -E 'Non-2xx|Socket errors' "$work/wrk.txt" || true)
sim_cpu=$(echo "($(cpu_ticks "$sim") - $before) / $(getconf CLK_TCK)" | bc -l)
nginx_rps=$(run_wrk http://127.0.0.1:18301/stream.txt "")

sim_chunks=$(echo "$sim_rps * $events" | bc -l)
nginx_chunks=$(echo "$nginx_rps * $events" | bc -l)
sim_per_cpu=$(echo "$sim_rps * $DURATION * $events / $sim_cpu" | bc -l)
printf '\n1. streaming throughput: %d SSE events (%d bytes) per response, %d connections, %d s, server on core 0, wrk on core 1\n' "$events" "$bytes" "$CONNECTIONS" "$DURATION"
printf '   %-34s %12s %14s\n' "server" "responses/s" "SSE events/s"
printf '   %-34s %12.0f %14.0f\n' "stagegate sim (fast profile)" "$sim_rps" "$sim_chunks"
printf '   %-34s %12.0f %14.0f\n' "nginx (same bytes, static file)" "$nginx_rps" "$nginx_chunks"
printf '   sim / nginx: %.2f; sim used %.1f CPU-s: %.0f SSE events per CPU-second\n' \
  "$(echo "$sim_rps / $nginx_rps" | bc -l)" "$sim_cpu" "$sim_per_cpu"
[ -n "$sim_errors" ] && echo "   wrk reported for the sim: $sim_errors"
kill "$sim"; wait "$sim" 2>/dev/null || true

# --- 2. open streams -------------------------------------------------------------------------
STREAMS=${STREAMS:-10000}
ulimit -n "$(ulimit -Hn)"
build/stagegate sim --port 18302 --profile bench/profiles/hold.yaml --corpus corpus/service-desk > "$work/hold.log" &
hold=$!; pids+=("$hold")
wait_port 18302 health
taskset -c 1 wrk -t2 -c"$STREAMS" -d25s --timeout 60s -s bench/hold.lua http://127.0.0.1:18302/v1/chat/completions > "$work/hold-wrk.txt" &
load=$!
peak=0
tokens_at() { curl -s http://127.0.0.1:18302/metrics | awk -F'} ' '/^vllm:generation_tokens_total/{print $2}'; }
tokens_before=$(tokens_at)
for _ in $(seq 40); do
  sleep 0.5
  running=$(curl -s http://127.0.0.1:18302/metrics | awk -F'} ' '/^vllm:num_requests_running/{print $2}')
  [ "${running%.*}" -gt "$peak" ] && peak=${running%.*}
done
tokens_after=$(tokens_at)
wait "$load" || true
rss_kb=$(awk '/VmHWM/{print $2}' "/proc/$hold/status")
completed=$(awk '/requests in/{print $1}' "$work/hold-wrk.txt")
errors=$(grep -E 'Socket errors|Non-2xx' "$work/hold-wrk.txt" || echo "none")
printf '\n2. open streams: %d connections, each a 20-token stream (40 ms a token when idle)\n' "$STREAMS"
printf '   peak running streams (sim /metrics): %d\n' "$peak"
printf '   sim peak resident memory: %.1f MiB\n' "$(echo "$rss_kb / 1024" | bc -l)"
printf '   streams completed in 25 s: %s; wrk errors: %s\n' "$completed" "$errors"
printf '   tokens delivered across all streams: %.0f per second (%.0f ms between tokens of one stream)\n' \
  "$(echo "($tokens_after - $tokens_before) / 20" | bc -l)" \
  "$(echo "$STREAMS * 20 * 1000 / ($tokens_after - $tokens_before)" | bc -l)"
