#!/usr/bin/env bash
# The test command (README and CI): set-up, type check, then the whole suite.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
bash "$root/scripts/setup.sh" --browser
cd "$root"
npx tsc -p tsconfig.json --noEmit
npm test
