#!/bin/sh
# Builds the application tree the runtime image ships, from a source checkout:
#   scripts/build-image-app.sh OUT_DIR
# 1. npm ci (all dependencies: the TypeScript compiler is a dev dependency), 2. tsc and the native
#    helper (scripts/build-native.sh: needs a C compiler),
# 3. OUT_DIR gets package.json, package-lock.json, the compiled agent, collector and common/ (what both
#    import), and production
#    dependencies only (npm ci --omit=dev), with the CLIs made executable.
# The Dockerfile's build stage runs exactly this; test/unit/deploy/image-build.test.ts runs it in a
# clean copy of the tracked files, because no Docker engine is available to the tests.
set -eu

out=${1:?usage: build-image-app.sh OUT_DIR}
src=$(pwd)
[ -f "$src/package.json" ] && [ -f "$src/package-lock.json" ] || {
  echo "build-image-app.sh: run from the repository root (package.json and package-lock.json)" >&2
  exit 2
}

npm ci --no-audit --no-fund
npx tsc -p tsconfig.json
node scripts/write-revision.mjs
sh scripts/build-native.sh

mkdir -p "$out/dist"
cp package.json package-lock.json LICENSE "$out/"
# Only the two programs and what both import: bench/ and the test stand-ins are compiled too but never shipped.
[ -d dist/common ] || { echo "build-image-app.sh: dist/common was not built" >&2; exit 1; }
rm -rf "$out/dist/common"
cp -R dist/common "$out/dist/common"
find "$out/dist/common" -name '*.map' -delete
for prog in agent collector; do
  if [ -f "dist/$prog/cli.js" ]; then
    rm -rf "$out/dist/$prog"
    cp -R "dist/$prog" "$out/dist/$prog"
    find "$out/dist/$prog" -name '*.map' -delete
    chmod 0755 "$out/dist/$prog/cli.js"
  elif [ "$prog" = agent ]; then
    echo "build-image-app.sh: dist/agent/cli.js was not built" >&2
    exit 1
  else
    echo "build-image-app.sh: note: dist/$prog/cli.js not built yet; the image ships without it" >&2
  fi
done

cd "$out"
# Scripts off: no production dependency needs an install script, and the runtime never runs npm.
npm ci --omit=dev --ignore-scripts --no-audit --no-fund
