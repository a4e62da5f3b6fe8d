#!/bin/sh
# Stages an nft and the libraries it loads into a private directory, as the witness of kube-proxy's
# image nft the agent runs (agent/io/tools.ts, agent/probes/kube-proxy-nft.ts):
#   scripts/stage-kube-proxy-nft.sh OUT_DIR [NFT]      NFT default /usr/sbin/nft
# OUT_DIR gets nft, lib/ (every library `ldd` resolves for it except the C library and the loader, which
# the runtime image's newer glibc provides: libnftables1, libnftnl11, libmnl0, libxtables12, libjansson4,
# libgmp10, libedit2 and theirs), ld.so (a link to the loader path the binary names, the same on every
# Debian release of an architecture) and version (what `nft --version` said). The Dockerfile's bookworm
# stage runs it on Debian 12's nft 1.0.6; the agent starts `ld.so --library-path OUT_DIR/lib OUT_DIR/nft`,
# so those libraries come before the runtime's own of the same sonames (trixie's libnftables1 1.1.3), and
# nothing named nft is on PATH. test/unit/deploy/stage-kube-proxy-nft.test.ts runs it on the system's nft.
set -eu

out=${1:?usage: stage-kube-proxy-nft.sh OUT_DIR [NFT]}
nft=${2:-/usr/sbin/nft}
[ -x "$nft" ] || { echo "stage-kube-proxy-nft.sh: no nft at $nft" >&2; exit 2; }
mkdir -p "$out/lib"
cp -L "$nft" "$out/nft"
chmod 755 "$out/nft"
deps=$(ldd "$nft")
loader=$(printf '%s\n' "$deps" | awk '$1 ~ /^\// && $2 !~ /=>/ {print $1; exit}')
[ -n "$loader" ] || { echo "stage-kube-proxy-nft.sh: ldd names no loader for $nft" >&2; exit 1; }
printf '%s\n' "$deps" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
  case "$soname" in
    libc.so.*|ld-linux*) ;;
    *) cp -L "$path" "$out/lib/$soname" ;;
  esac
done
if printf '%s\n' "$deps" | grep -q 'not found'; then
  echo "stage-kube-proxy-nft.sh: $nft has unresolved libraries" >&2
  exit 1
fi
ln -sf "$loader" "$out/ld.so"
"$out/ld.so" --library-path "$out/lib" "$out/nft" --version >"$out/version"
