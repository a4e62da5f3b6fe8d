#!/usr/bin/env bash
# The benchmarks, one command, on a fresh Debian machine as root: installs what they need, raises
# vm.max_map_count (a UML guest with GBs of memory needs it), builds, runs `npm run bench`. Results:
# bench/results/latest.md (the agent-cost targets, one row each, then the details; the README's table)
# and *.json. The load average is recorded with them: the figures are only as quiet as the machine.
#   scripts/bench.sh                    every row at its target's size: 10,000 Services, 5,000 agents,
#                                       50,000 Prometheus nodes, 1,000 RSS scans (hours: 1,000 scans
#                                       at 10,000 Services is most of it)
#   scripts/bench.sh --quick            every row at a smaller N: 1,000 Services, 500 agents, 5,000
#                                       Prometheus nodes, 100 RSS scans (about 15 minutes on 2 CPUs)
#   scripts/bench.sh --only nft,fleet   some phases (nft, ipvs, fleet)
#   scripts/bench.sh --only nft,ipvs --scan-only   rows (b) and (c) alone at 10,000 Services
# Flags go to `npm run bench`; `npm run bench -- --help` (after a build) lists them all.
set -euo pipefail

# --help is this comment, before anything is installed or built.
for arg in "$@"; do
  case "$arg" in
    --) break ;;
    -h | --help)
      sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      exit 0
      ;;
  esac
done

cd "$(dirname "$0")/.."

scripts/setup-debian.sh --test
bench_pkgs=(prometheus-node-exporter time curl)
missing=()
for p in "${bench_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Debian package starts node_exporter on :9100; the benchmark starts its own beside the agent.
if systemctl is-active --quiet prometheus-node-exporter 2>/dev/null; then systemctl stop prometheus-node-exporter || true; fi

# UML maps guest memory in many pieces; the default 65530 kills the guest's large processes.
if [[ "$(sysctl -n vm.max_map_count)" -lt 1048576 ]]; then sysctl -qw vm.max_map_count=1048576; fi
ulimit -n 65536 || true

[[ -d node_modules ]] || npm ci --no-audit --no-fund
npx tsc -p .
npm run bench -- "$@"

# How cost grows (bench/results/growth.md): the one-shot scan at 1,000 / 10,000 / 30,000 Services in
# both modes beside its floor, with nft 1.1.3 from a private root too; after a full run only.
if [[ " $* " != *" --quick "* && " $* " != *" --only "* ]]; then
  scripts/nft11-root.sh /var/tmp/proxyscope-nft11 >/dev/null
  node dist/bench/growth.js --sizes 0,1000,10000,30000 --nft11-root /var/tmp/proxyscope-nft11
fi

# ipvs mode at the host's speed (bench/replay, docs/benchmarks.md): the node recorded once in UML (the
# first run records it, ~10 min), replayed in a network namespace; serve beside node_exporter there.
# Results: bench/results/replay-ipvs.md and .json.
# Part of the ipvs phase: --only without ipvs leaves it out.
replay=(--sizes 1000,10000 --serve-n 10000)
only=""
prev=""
for arg in "$@"; do
  [[ "$arg" == --quick ]] && replay=(--sizes 1000 --serve-n 1000 --serve-s 120)
  [[ "$prev" == --only ]] && only="$arg"
  [[ "$arg" == --only=* ]] && only="${arg#--only=}"
  prev="$arg"
done
if [[ -z "$only" || ",$only," == *,ipvs,* ]]; then
  node dist/bench/replay/run.js "${replay[@]}" --name replay-ipvs
fi
