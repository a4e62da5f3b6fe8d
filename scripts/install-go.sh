#!/usr/bin/env bash
# Installs the Go toolchain the tests build the real kube-proxy with (test/kube-proxy/build.mjs), from the
# Go module proxy, where `go` itself gets a toolchain it switches to (module golang.org/toolchain, the
# mechanism behind GOTOOLCHAIN): Debian 12's golang is 1.19, too old to build Kubernetes (1.34 needs Go
# 1.24, 1.37 needs 1.26) and too old to fetch a toolchain itself (GOTOOLCHAIN came in Go 1.21).
#   scripts/install-go.sh PREFIX    unpacks into PREFIX/go<version>/ and prints the path of its bin/go
# The zip is checked against the SHA-256 pinned here before anything is unpacked.
set -euo pipefail
prefix="${1:?usage: scripts/install-go.sh PREFIX}"
go_version="1.26.8"
case "$(uname -m)" in
  x86_64) arch=amd64 sum=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7 ;;
  aarch64) arch=arm64 sum=02b36b6787b3ac767668f630e2998df45a3b1f9ffee08d1bf3ef6487cd658d99 ;;
  *)
    echo "install-go: no pinned Go ${go_version} toolchain for $(uname -m)" >&2
    exit 1
    ;;
esac
module="v0.0.1-go${go_version}.linux-${arch}"
dest="${prefix}/go${go_version}"
if [[ ! -x "${dest}/bin/go" ]]; then
  # The first proxy GOPROXY names (an http(s) one), as `go` would use; proxy.golang.org by default.
  proxy="${GOPROXY:-https://proxy.golang.org}"
  proxy="${proxy%%[,|]*}"
  [[ "$proxy" == http* ]] || proxy="https://proxy.golang.org"
  url="${proxy%/}/golang.org/toolchain/@v/${module}.zip"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  if ! curl -fsSL --retry 3 -o "${tmp}/go.zip" "$url"; then
    echo "install-go: \`curl -fsSL ${url}\` failed: the Go module proxy is unreachable or has no ${module}" >&2
    exit 1
  fi
  got="$(sha256sum "${tmp}/go.zip" | cut -d' ' -f1)"
  if [[ "$got" != "$sum" ]]; then
    echo "install-go: ${url} has SHA-256 ${got}, not the pinned ${sum}" >&2
    exit 1
  fi
  unzip -q "${tmp}/go.zip" -d "$tmp"
  # Module zips carry no file modes: the go command makes these executable when it unpacks a toolchain.
  chmod +x "${tmp}/golang.org/toolchain@${module}/bin/"* "${tmp}/golang.org/toolchain@${module}/pkg/tool/"*/*
  mkdir -p "$prefix"
  rm -rf "$dest"
  mv "${tmp}/golang.org/toolchain@${module}" "$dest"
fi
echo "${dest}/bin/go"
