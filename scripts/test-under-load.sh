#!/usr/bin/env bash
# The whole suite on a busy machine: `npm test` (or the tap arguments given) while two CPU hogs spin
# for the whole run, so that a test which tells a fault from a slow answer by a deadline, or waits
# for readiness by a fixed time, fails here rather than on a user's or CI's loaded machine.
#   scripts/test-under-load.sh                       npm test, under two busy loops
#   scripts/test-under-load.sh test/e2e/x.test.ts    npx tap on these files only (after a build)
#   HOGS=4 scripts/test-under-load.sh                more busy loops
# Prints the load average before and after and exits with the tests' status. The hogs are this
# script's own children, stopped by their process ids on any exit: nothing is left running.
set -euo pipefail
cd "$(dirname "$0")/.."

hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
  hogs=()
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM

for _ in $(seq "${HOGS:-2}"); do
  # A busy loop in its own bash: no I/O, all CPU.
  bash -c 'while :; do :; done' &
  hogs+=("$!")
done
echo "test-under-load: ${#hogs[@]} busy loops (pids ${hogs[*]}); load before: $(cut -d' ' -f1-3 /proc/loadavg)"

started=$(date +%s)
status=0
if (($#)); then
  npx tsc -p . && npx tap "$@" || status=$?
else
  npm test || status=$?
fi
echo "test-under-load: exit ${status} after $(($(date +%s) - started)) s; load now: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
