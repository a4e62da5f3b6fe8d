#!/usr/bin/env bash
# nft 1.1 from Debian trixie in a private root, for the nftables benchmark rows with nft 1.1 and for
# test/kernel/nft11-sets-netns.test.ts (scripts/setup-debian.sh --test builds it for that): the
# system's apt sources, package lists and installed packages are never touched. A private sources
# list (the mirror the system already uses, suite trixie) and a private lists directory feed
# `apt-get download`; each .deb is unpacked with `dpkg -x` into ROOT; nft runs through trixie's own
# dynamic loader with ROOT's libraries. ROOT is kept (a cache): a second run only prints the version.
#   scripts/nft11-root.sh [ROOT]      default /var/tmp/proxyscope-nft11
# Writes ROOT/proxyscope-tools/nft, a wrapper the agent takes as its nft (--tool-dir), and
# ROOT/proxyscope-image-tools/ with nft, ip, ipset and ip(6)tables-{nft,legacy}-save: the tools of the
# agent's image (Debian trixie; test/kernel/trixie-tools-netns.test.ts). Apart, so the benchmarks' nft 1.1
# rows (--tool-dir ROOT/proxyscope-tools) still change only nft.
set -euo pipefail
ROOT="${1:-/var/tmp/proxyscope-nft11}"
# Debian's multiarch directory and dynamic loader for this machine (the release runs on amd64 and arm64).
case "$(dpkg --print-architecture)" in
  amd64) LIB="$ROOT/usr/lib/x86_64-linux-gnu" LD="$ROOT/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" ;;
  arm64) LIB="$ROOT/usr/lib/aarch64-linux-gnu" LD="$ROOT/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1" ;;
  *) echo "nft11-root: no loader known for $(dpkg --print-architecture)" >&2; exit 1 ;;
esac
if [[ ! -x "$ROOT/usr/sbin/nft" || ! -x "$ROOT/usr/sbin/xtables-nft-multi" || ! -x "$ROOT/usr/bin/ip" ||
  ! -x "$ROOT/usr/sbin/ipset" || ! -e "$LD" ]]; then
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [[ -n "$mirror" ]] || mirror=$(sed -n 's/^deb \(http[^ ]*\/debian\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
  [[ -n "$mirror" ]] || { echo "nft11-root: no Debian mirror in /etc/apt/sources.list*" >&2; exit 1; }
  apt_dir="$ROOT.apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/debs" "$ROOT"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$apt_dir/sources.list"
  opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::archives=$apt_dir/debs"
    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "APT::Get::List-Cleanup=0")
  apt-get "${opts[@]}" update -qq
  (cd "$apt_dir/debs" && apt-get "${opts[@]}" download nftables/trixie libnftables1/trixie libnftnl11/trixie \
    libc6/trixie libgmp10/trixie libjansson4/trixie libmnl0/trixie libxtables12/trixie libedit2/trixie \
    libbsd0/trixie libmd0/trixie libtinfo6/trixie \
    iptables/trixie libip4tc2/trixie libip6tc2/trixie libnetfilter-conntrack3/trixie libnfnetlink0/trixie \
    ipset/trixie libipset13t64/trixie \
    iproute2/trixie libbpf1/trixie libelf1t64/trixie libcap2/trixie libdb5.3t64/trixie libtirpc3t64/trixie \
    libzstd1/trixie zlib1g/trixie libgssapi-krb5-2/trixie libkrb5-3/trixie libk5crypto3/trixie \
    libkrb5support0/trixie libcom-err2/trixie libkeyutils1/trixie libssl3t64/trixie libselinux1/trixie \
    libpcre2-8-0/trixie)
  for d in "$apt_dir"/debs/*.deb; do dpkg -x "$d" "$ROOT"; done
fi
mkdir -p "$ROOT/proxyscope-tools"
cat >"$ROOT/proxyscope-tools/nft" <<WRAP
#!/bin/sh
exec $LD --library-path $LIB $ROOT/usr/sbin/nft "\$@"
WRAP
chmod 755 "$ROOT/proxyscope-tools/nft"
IMG="$ROOT/proxyscope-image-tools"
mkdir -p "$IMG"
# The iptables multi-call binaries take their name from argv[0] (the loader's --argv0) and their
# extensions from XTABLES_LIBDIR (the agent starts tools with no environment, so the wrapper sets it).
for t in iptables-nft-save ip6tables-nft-save iptables-legacy-save ip6tables-legacy-save; do
  multi=$(basename "$(readlink "$ROOT/usr/sbin/$t")")
  printf '#!/bin/sh\nXTABLES_LIBDIR=%s/xtables exec %s --argv0 %s --library-path %s %s "$@"\n' \
    "$LIB" "$LD" "$t" "$LIB" "$ROOT/usr/sbin/$multi" >"$IMG/$t"
done
printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' "$LD" "$LIB" "$ROOT/usr/bin/ip" >"$IMG/ip"
printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' "$LD" "$LIB" "$ROOT/usr/sbin/ipset" >"$IMG/ipset"
cp "$ROOT/proxyscope-tools/nft" "$IMG/nft"
chmod 755 "$IMG"/*
"$ROOT/proxyscope-tools/nft" --version
