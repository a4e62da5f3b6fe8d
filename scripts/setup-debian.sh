#!/usr/bin/env bash
# Installs what proxyscope needs on a Debian machine, as root. Idempotent.
#   scripts/setup-debian.sh           the tools the agent's probes run
#   scripts/setup-debian.sh --test    plus what the test suite needs (UML, Prometheus, Chromium)
set -euo pipefail

runtime=(nftables ipset ipvsadm iptables iproute2 kmod curl ca-certificates)
testing=(user-mode-linux prometheus chromium)

pkgs=("${runtime[@]}")
[[ "${1:-}" == "--test" ]] && pkgs+=("${testing[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Prometheus' package starts a server on :9090 by default; the tests start their own.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if systemctl is-active --quiet prometheus 2>/dev/null; then systemctl stop prometheus || true; fi
fi

if ! command -v node >/dev/null || [[ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]]; then
  echo "proxyscope needs Node.js 20 or newer (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
