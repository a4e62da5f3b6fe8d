# syntax=docker/dockerfile:1
# proxyscope: one image for both programs.
#   agent     (DaemonSet)  proxyscope-agent serve|scan|schema
#   collector (Deployment) proxyscope serve
#
#   docker build -t REGISTRY/proxyscope:0.1.0 --build-arg VERSION=0.1.0 .
#   (the release: .github/workflows/release.yml, with NODE_VERSION from .node-version and NODE_DIGEST)
#
# The build steps live in scripts/build-image-app.sh so they can be tested without a Docker engine.

# The base, pinned: NODE_VERSION is .node-version's exact release (test/unit/deploy/dockerfile.test.ts keeps
# them equal) and NODE_DIGEST "@" and the sha256 of node:NODE_VERSION-trixie-slim's image index, which the
# release workflow looks up and passes (--build-arg NODE_DIGEST=@sha256:...): the image is then built from
# those exact bytes whatever the tag is moved to. Empty (a local build): the exact version's tag.
# Debian 13 (trixie), not 12 (bookworm): the agent reads what the HOST's tools wrote, so its tools must be
# at least as new. Bookworm's nft 1.0.6 dies by SIGSEGV listing a set that nft >= 1.1.2 wrote (set user
# data; kubernetes/kubernetes#136786) — firewalld, Azure Linux 3, trixie and Fedora hosts write such sets —
# and one such set anywhere fails the agent's whole nftables read. Trixie ships nft 1.1.3, iptables 1.8.11,
# ipset 7.22, iproute2 6.15, ipvsadm 1.31 (docs/security.md, "What the image carries"). Bookworm's nft
# 1.0.6 comes along apart, as the witness of kube-proxy's image nft (the kube-proxy-nft stage below).
ARG NODE_VERSION=26.12.1
ARG NODE_DIGEST=
ARG NODE_IMAGE=node:${NODE_VERSION}-trixie-slim${NODE_DIGEST}
# The witness of kube-proxy's image nft: Debian 12 (bookworm)'s nft 1.0.6, what kube-proxy's base image
# registry.k8s.io/build-image/distroless-iptables installed from bookworm's nftables package up to v0.9.3 /
# v0.8.11 (kubernetes/release images/build/distroless-iptables/distroless-bookworm/Dockerfile; from
# v0.9.4 / v0.8.12, kubernetes/release#4419, it builds nftables 1.0.6.1, in kube-proxy from v1.37.0,
# kubernetes/kubernetes#140405). BOOKWORM_DIGEST as NODE_DIGEST: "@sha256:..." of debian:bookworm-slim's
# image index, looked up and passed by the release workflow; empty (a local build): the tag.
ARG BOOKWORM_DIGEST=
ARG BOOKWORM_IMAGE=debian:bookworm-slim${BOOKWORM_DIGEST}

FROM ${BOOKWORM_IMAGE} AS kube-proxy-nft
RUN apt-get update \
 && apt-get install -y --no-install-recommends nftables \
 && rm -rf /var/lib/apt/lists/*
COPY scripts/stage-kube-proxy-nft.sh /stage-kube-proxy-nft.sh
RUN sh /stage-kube-proxy-nft.sh /out/nft-kube-proxy /usr/sbin/nft

FROM ${NODE_IMAGE} AS build
# A C compiler for the agent's one native helper (agent/native/nft-generation.c); only this stage has it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The commit the image is built from (the release passes github.sha): the context has no .git, and
# build_info's `revision` label reads it (scripts/write-revision.mjs).
ARG REVISION=
RUN PROXYSCOPE_REVISION="${REVISION}" sh scripts/build-image-app.sh /out

FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=
LABEL org.opencontainers.image.title="proxyscope" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.description="What kube-proxy really does on each node, and whether the node can leave the deprecated ipvs mode" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="proxyscope"

# Exactly the Debian packages of the tools the probes run, as listed once in agent/io/tools.ts (TOOLS,
# debianPackage); a test checks this line against that list. iptables provides both the legacy and the
# nf_tables backends (iptables-legacy-save, iptables-nft-save and the ip6 variants).
# npm, npx, corepack and yarn are removed: nothing in the runtime installs anything.
RUN apt-get update \
 && apt-get install -y --no-install-recommends iproute2 ipset iptables ipvsadm nftables \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg

WORKDIR /app
COPY --from=build /out /app
# kube-proxy's nft, apart (never on PATH, never the agent's own nft): its binary and bookworm's libraries
# under lib/, run through ld.so (the loader, trixie's glibc) with that library path
# (agent/probes/kube-proxy-nft.ts). It lists set names and raises nft-host-newer-than-kube-proxy-supports
# when it dies on sets a newer nft wrote (kubernetes/kubernetes#136786).
COPY --from=kube-proxy-nft /out/nft-kube-proxy /opt/nft-kube-proxy
RUN ln -s /app/dist/agent/cli.js /usr/local/bin/proxyscope-agent \
 && ln -s /app/dist/collector/cli.js /usr/local/bin/proxyscope

ENV NODE_ENV=production
# A one-shot command (`kubectl exec ... proxyscope-agent scan`) keeps Node's module compile cache here, on
# the DaemonSet's /tmp emptyDir: its second and later runs skip compiling ~280 modules (agent/cli.ts).
ENV PROXYSCOPE_COMPILE_CACHE=/tmp/proxyscope-compile-cache
# Non-root by default: the collector and `schema` need nothing more. The agent's probes read netfilter
# and IPVS state over netlink, which needs CAP_NET_ADMIN (and CAP_NET_RAW for iptables-legacy-save):
# its DaemonSet runs it as uid 0 with every other capability dropped. File capabilities on the tools
# were not chosen: allowPrivilegeEscalation=false (no_new_privs) makes the kernel ignore them, and
# Kubernetes gives non-root processes no ambient capabilities. By hand:
# (--init: an init as PID 1 reaps what a killed tool leaves, as the DaemonSet's pause does; docs/security.md)
#   docker run --rm --init --net=host --user 0 --cap-drop ALL --cap-add NET_ADMIN --cap-add NET_RAW \
#     -v /etc/os-release:/host/etc/os-release:ro ... IMAGE scan --host-root /host
USER 10001:10001
EXPOSE 9977
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PROXYSCOPE_PORT||9977)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["proxyscope-agent"]
CMD ["serve"]
