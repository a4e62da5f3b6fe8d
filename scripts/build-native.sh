#!/bin/sh
# Builds the agent's one native helper (agent/native/nft-generation.c, why it is C is said there) into
# dist/agent/native/, where the agent looks for it; and, in a checkout with its tests, the User-Mode
# Linux harness's ptrace shim (test/helpers/uml/xstate-shim.c, why is said there) into dist/uml/ and the
# stand-in for a pod's pause container (test/helpers/pause/pause-standin.c) into dist/test-helpers/, which
# no image ships (the image's build context has no test/). Needs a C compiler and the Linux and libc headers
# (Debian: gcc, libc6-dev, linux-libc-dev; scripts/setup-debian.sh installs them). Run by `npm run build`.
set -eu
cd "$(dirname "$0")/.."
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || {
  echo "build-native.sh: no C compiler ($cc): install gcc and libc6-dev (scripts/setup-debian.sh does)" >&2
  exit 1
}
mkdir -p dist/agent/native
"$cc" -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror -fstack-protector-strong -D_FORTIFY_SOURCE=2 \
  -o dist/agent/native/proxyscope-nft-generation agent/native/nft-generation.c
chmod 0755 dist/agent/native/proxyscope-nft-generation

if [ -f test/helpers/uml/xstate-shim.c ]; then
  mkdir -p dist/uml
  # Built aside and renamed: a UML boot still running has the old one mapped.
  "$cc" -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror -shared -fPIC \
    -o dist/uml/uml-xstate-shim.so.new test/helpers/uml/xstate-shim.c -ldl
  mv -f dist/uml/uml-xstate-shim.so.new dist/uml/uml-xstate-shim.so
fi

if [ -f test/helpers/pause/pause-standin.c ]; then
  mkdir -p dist/test-helpers
  "$cc" -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror \
    -o dist/test-helpers/pause-standin test/helpers/pause/pause-standin.c
fi
