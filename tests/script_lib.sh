# Sourced by the ctest shell scripts that drive the stagegate binary:
#   source "$(dirname "${BASH_SOURCE[0]}")/../script_lib.sh"
#   start_test "$@"   # checks STAGEGATE WORK_DIR; sets root, stagegate, dir; empties dir

# start_test STAGEGATE WORK_DIR
start_test() {
  if [[ $# -ne 2 ]]; then
    echo "usage: $0 STAGEGATE WORK_DIR" >&2
    exit 2
  fi
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  stagegate="$1"
  dir="$2"
  rm -rf "$dir"
  mkdir -p "$dir"
}

# require_browser: puppeteer-core from tests/node, and Chromium ($CHROMIUM or /usr/bin/chromium).
require_browser() {
  if [[ ! -f "$root/tests/node/node_modules/puppeteer-core/package.json" ]]; then
    echo "puppeteer-core is missing: run npm ci --prefix tests/node" >&2
    exit 1
  fi
  local chromium="${CHROMIUM:-/usr/bin/chromium}"
  if [[ ! -x "$chromium" ]]; then
    echo "no Chromium at $chromium: apt-get install chromium, or set CHROMIUM" >&2
    exit 1
  fi
}

# run_testdata NAME: runs tests/testdata/run/NAME.yaml (its ../../../ paths made absolute) into
# $dir/run with the store $dir/store.db; sets run_id.
run_testdata() {
  sed "s#\.\./\.\./\.\./#$root/#" "$root/tests/testdata/run/$1.yaml" > "$dir/$1.yaml"
  "$stagegate" --quiet --db "$dir/store.db" run "$dir/$1.yaml" --out "$dir/run" > /dev/null
  run_id="$(run_id_of "$dir/run")"
}

# run_id_of RUN_DIR: the run id in RUN_DIR/run.json.
run_id_of() {
  sed -n 's/^ *"run_id": "\(.*\)",$/\1/p' "$1/run.json"
}
