#!/usr/bin/env bash
# Installs what proxyscope needs on a Debian machine, as root. Idempotent.
#   scripts/setup-debian.sh           the tools the agent's probes run, and Node.js (see below)
#   scripts/setup-debian.sh --test    plus what the test suite needs (UML, Prometheus, Chromium, Go to
#                                     build the real kube-proxy (scripts/install-go.sh), and helm and
#                                     kustomize built once from the Go module proxy by scripts/build-go-tool.sh,
#                                     and trixie's nft 1.1 in a private root by scripts/nft11-root.sh)
#
# Node.js: the version in .node-version (the one place it is pinned; CI's setup-node reads the same file).
# When the `node` first on PATH is another major line, the official Node.js binary is installed from the
# npm registry's node-linux-<arch> package into /opt/proxyscope-node/<version> and linked as
# /usr/local/bin/node. Debian's own nodejs is older than the line we support, and a tarball from
# nodejs.org would need a second download channel; the registry is the channel npm ci uses anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
# /usr/local/bin first, as on a default Debian root shell: that is where the Node installed here lives.
export PATH="/usr/local/sbin:/usr/local/bin:$PATH"

# gcc and libc6-dev build the agent's one native helper (agent/native/nft-generation.c) in `npm run build`.
runtime=(nftables ipset ipvsadm iptables nfacct iproute2 kmod curl ca-certificates gcc libc6-dev)
testing=(user-mode-linux prometheus chromium openssl unzip)

node_version="$(tr -d '[:space:]' <.node-version)"
node_major="${node_version%%.*}"
node_prefix="/opt/proxyscope-node/${node_version}"
# npm for the Node installed here when the machine has none (npm's own engines range covers Node 26).
npm_version="11.21.2"

pkgs=("${runtime[@]}")
[[ "${1:-}" == "--test" ]] && pkgs+=("${testing[@]}")

have_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)"
need_node=0
if [[ "$have_major" != "$node_major" ]]; then
  need_node=1
  # Linux builds of Node since 25 link against libatomic.
  pkgs+=(libatomic1)
  # Bootstrap only: Debian's npm fetches the Node package, then the npm installed beside it takes over.
  command -v npm >/dev/null || pkgs+=(npm)
fi

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

if ((need_node)); then
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *)
      echo "no Node.js ${node_version} package for $(uname -m); install Node.js ${node_major} yourself" >&2
      exit 1
      ;;
  esac
  node_bin="${node_prefix}/node_modules/node-linux-${arch}/bin/node"
  npm_cli="${node_prefix}/node_modules/npm/bin/npm-cli.js"
  # Debian's npm (9.x, made for Debian's Node 18) only bootstraps: a current npm is installed beside Node.
  own_npm=0
  npm_path="$(readlink -f "$(command -v npm)")"
  [[ "$(dpkg-query -S "$npm_path" 2>/dev/null)" == npm:* ]] && own_npm=1
  if [[ ! -x "$node_bin" ]] || { ((own_npm)) && [[ ! -f "$npm_cli" ]]; }; then
    echo "installing Node.js ${node_version} (node-linux-${arch}) into ${node_prefix}"
    mkdir -p "$node_prefix"
    want=("node-linux-${arch}@${node_version}")
    ((own_npm)) && want+=("npm@${npm_version}")
    npm install --prefix "$node_prefix" --no-save --no-audit --no-fund --no-package-lock \
      --loglevel=error "${want[@]}"
  fi
  ln -sfn "$node_bin" /usr/local/bin/node
  if ((own_npm)); then
    ln -sfn "$npm_cli" /usr/local/bin/npm
    ln -sfn "${node_prefix}/node_modules/npm/bin/npx-cli.js" /usr/local/bin/npx
  fi
  hash -r
fi

found="$(node --version 2>/dev/null || echo none)"
if [[ "$found" != "v${node_major}."* ]]; then
  echo "proxyscope needs Node.js ${node_major} (found: ${found} at $(command -v node || echo nowhere))" >&2
  exit 1
fi

# Go, for test/kube-proxy/build.mjs (`npm test` builds the real kube-proxy with it, cached by version).
# A go on PATH from 1.21 on does: with GOTOOLCHAIN=auto it fetches the toolchain a Kubernetes release
# names itself. An older one (Debian 12's golang is 1.19) or none: the pinned toolchain from the Go
# module proxy, in /opt/proxyscope-go, linked as /usr/local/bin/go.
if [[ "${1:-}" == "--test" ]]; then
  go_minor="$(go env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
  if [[ -z "$go_minor" ]] || ((go_minor < 21)); then
    go_bin="$(scripts/install-go.sh /opt/proxyscope-go)"
    ln -sfn "$go_bin" /usr/local/bin/go
    hash -r
  fi
  echo "go: $(go version) at $(command -v go)"
  # The deploy tests run the real helm and kustomize at the versions scripts/build-go-tool.sh pins (cached
  # per version).
  scripts/build-go-tool.sh helm >/dev/null
  scripts/build-go-tool.sh kustomize >/dev/null
  # test/kernel/nft11-sets-netns.test.ts needs sets written by a newer nft than the system's (bookworm's
  # 1.0.6): Debian trixie's nft in a private root, never through the system's apt sources. Built once into
  # the cache the test looks in (PROXYSCOPE_NFT11_ROOT moves both); a second run only checks its version.
  scripts/nft11-root.sh "${PROXYSCOPE_NFT11_ROOT:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/proxyscope/nft11}"
fi
