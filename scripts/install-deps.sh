#!/usr/bin/env bash
# Installs the Debian packages in scripts/packages.txt that are missing (with --tests, also those in
# scripts/test-packages.txt: the browser of the reviewer page's test, scikit-learn for the judge
# calibration's test); does nothing when all are present. Uses sudo when not run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

lists=(scripts/packages.txt)
if [ "${1:-}" = "--tests" ]; then lists+=(scripts/test-packages.txt); fi
missing=()
while read -r package; do
  [ -z "$package" ] && continue
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done < <(cat "${lists[@]}")

# Node.js runs the openai client test; any recent one will do, Debian's included.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q "${missing[@]}"
