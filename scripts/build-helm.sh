#!/usr/bin/env bash
# Builds the real helm binary the chart tests run (test/unit/deploy/helm-chart.test.ts), from the Go module
# proxy, at one pinned release, into a cache outside the checkout keyed by that version; reuses it when
# present. Prints the binary's path on stdout (progress on stderr). Idempotent.
#   scripts/build-helm.sh            build (once) and print the path
# Needs Go (any release that builds helm's go.mod) and the module proxy (GOPROXY, default proxy.golang.org).
# Why from source and not a release tarball: the module proxy is the one download channel this needs,
# checked against the Go checksum database like every module.
set -euo pipefail

# The newest v3 the proxy served when pinned (`go list -m -versions helm.sh/helm/v3`). Bump here only.
HELM_VERSION="v3.22.0"
# What helm's own Makefile stamps in with -ldflags (helm v3.22.0 Makefile, LDFLAGS): without them the binary
# says it is "v3.22", and `helm template`/`helm lint` assume Kubernetes v1.20 (pkg/chartutil/capabilities.go)
# instead of the client-go line the release is built on (k8s.io/client-go v0.37.0 in its go.mod: 1.37).
HELM_K8S_MINOR="37"
ldflags="-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X ${pkg}.k8sVersionMajor=1 -X ${pkg}.k8sVersionMinor=${HELM_K8S_MINOR}"
done

cache="${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/proxyscope/helm/${HELM_VERSION}"
bin="${cache}/helm"

if [[ -x "$bin" ]] && "$bin" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION"; then
  echo "$bin"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-helm: Go is not installed (need the go command to build helm ${HELM_VERSION} from the module proxy; install Go, e.g. apt-get install golang-go, or put helm ${HELM_VERSION} at ${bin})" >&2
  exit 2
fi

mkdir -p "$cache"
tmp="$(mktemp -d "${cache}/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "build-helm: building helm.sh/helm/v3/cmd/helm@${HELM_VERSION} (GOPROXY=$(go env GOPROXY)); this takes minutes once" >&2
# Static, reproducible paths: CGO off (no libc dependency), -trimpath (no build machine paths in it).
if ! CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}" >"$tmp/log" 2>&1; then
  echo "build-helm: go install helm.sh/helm/v3/cmd/helm@${HELM_VERSION} failed (is the Go module proxy $(go env GOPROXY) reachable?):" >&2
  tail -n 20 "$tmp/log" >&2
  exit 3
fi
# Written whole or not at all: a build killed half-way never leaves a binary the cache check would trust.
mv -f "$tmp/helm" "$bin"
echo "$bin"
