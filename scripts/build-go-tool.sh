#!/usr/bin/env bash
# Builds a Go tool the deploy tests run, from the Go module proxy, at one pinned release, into a cache
# outside the checkout keyed by tool and version; reuses it when present. Prints the binary's path on stdout
# (progress on stderr). Idempotent.
#   scripts/build-go-tool.sh helm        the real helm (test/unit/deploy/helm-chart.test.ts)
#   scripts/build-go-tool.sh kustomize   the real kustomize (test/unit/deploy/: manifests/ rendered)
# Needs Go (any release that builds the tool's go.mod) and the module proxy (GOPROXY, default proxy.golang.org).
# Why from source and not a release tarball: the module proxy is the one download channel this needs,
# checked against the Go checksum database like every module.
set -euo pipefail

tool="${1:-}"
case "$tool" in
  helm)
    # The newest v3 the proxy served when pinned (`go list -m -versions helm.sh/helm/v3`). Bump here only.
    VERSION="v3.22.0"
    module="helm.sh/helm/v3/cmd/helm"
    # What helm's own Makefile stamps in with -ldflags (helm v3.22.0 Makefile, LDFLAGS): without them the
    # binary says it is "v3.22", and `helm template`/`helm lint` assume Kubernetes v1.20
    # (pkg/chartutil/capabilities.go) instead of the client-go line the release is built on
    # (k8s.io/client-go v0.37.0 in its go.mod: 1.37).
    HELM_K8S_MINOR="37"
    ldflags="-X helm.sh/helm/v3/internal/version.version=${VERSION}"
    for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
      ldflags+=" -X ${pkg}.k8sVersionMajor=1 -X ${pkg}.k8sVersionMinor=${HELM_K8S_MINOR}"
    done
    version_of() { "$1" version --template '{{.Version}}' 2>/dev/null; }
    ;;
  kustomize)
    # The newest v5 the Go here builds (`go list -m -versions sigs.k8s.io/kustomize/kustomize/v5`; v5.8.3
    # wants go >= 1.27, and the machines' Go is 1.26 with GOTOOLCHAIN=local).
    VERSION="v5.8.2"
    module="sigs.k8s.io/kustomize/kustomize/v5"
    # kustomize's release builds stamp the version the same way (api/provenance/provenance.go).
    ldflags="-X sigs.k8s.io/kustomize/api/provenance.version=${VERSION}"
    version_of() { "$1" version 2>/dev/null; }
    ;;
  *)
    echo "usage: scripts/build-go-tool.sh helm|kustomize" >&2
    exit 64
    ;;
esac

cache="${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/proxyscope/${tool}/${VERSION}"
bin="${cache}/${tool}"

if [[ -x "$bin" ]] && version_of "$bin" | grep -qx "$VERSION"; then
  echo "$bin"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-go-tool: Go is not installed (need the go command to build ${tool} ${VERSION} from the module proxy; install Go, e.g. apt-get install golang-go, or put ${tool} ${VERSION} at ${bin})" >&2
  exit 2
fi

mkdir -p "$cache"
tmp="$(mktemp -d "${cache}/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "build-go-tool: building ${module}@${VERSION} (GOPROXY=$(go env GOPROXY)); this takes minutes once" >&2
# Static, reproducible paths: CGO off (no libc dependency), -trimpath (no build machine paths in it).
# GOTOOLCHAIN=auto: an older go fetches the toolchain the tool's go.mod names (golang.org/toolchain, from
# the module proxy).
if ! GOTOOLCHAIN=auto CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath -ldflags "$ldflags" "${module}@${VERSION}" >"$tmp/log" 2>&1; then
  echo "build-go-tool: go install ${module}@${VERSION} failed (is the Go module proxy $(go env GOPROXY) reachable?):" >&2
  tail -n 20 "$tmp/log" >&2
  exit 3
fi
# Written whole or not at all: a build killed half-way never leaves a binary the cache check would trust.
mv -f "$tmp/${tool}" "$bin"
echo "$bin"
