// The Dockerfile: its runtime installs exactly the Debian packages of the tools the probes run
// (agent/io/tools.ts) and its build stage only the C compiler of the agent's native helper,
// builds through scripts/build-image-app.sh, and passes a real Dockerfile linter (dockerfile-utils, the
// linter behind the VS Code Docker extension; Debian packages no hadolint).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { DEFAULT_TOOL_DIRS, DEFAULT_WITNESS_DIR, TOOLS } from "../../../agent/io/tools.js";
import { ROOT } from "./lib.js";

const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
// Instructions with their continuation lines joined, comments dropped.
const instructions = dockerfile
  .split("\n")
  .filter((l) => !/^\s*#/.test(l))
  .join("\n")
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter(Boolean);
const stages = () => instructions.filter((i) => /^FROM\s/i.test(i));
const stageStarts = () => instructions.map((i, n) => (/^FROM\s/i.test(i) ? n : -1)).filter((n) => n >= 0);
const lastStage = () => instructions.slice(stageStarts().at(-1));
/** The instructions of the stage named `name` (FROM ... AS name). */
const stage = (name: string) => {
  const starts = stageStarts();
  const k = starts.findIndex((n) => new RegExp(`\\sAS\\s+${name}$`, "i").test(instructions[n]!));
  return k < 0 ? [] : instructions.slice(starts[k], starts[k + 1]);
};

function aptPackages(from: readonly string[] = lastStage()): string[] {
  const pkgs: string[] = [];
  for (const ins of from.filter((i) => /^RUN\s/i.test(i))) {
    for (const m of ins.matchAll(/apt-get\s+install\s+([^&|;]+)/g)) {
      pkgs.push(...m[1]!.split(/\s+/).filter((w) => w !== "" && !w.startsWith("-")));
    }
  }
  return pkgs;
}

const lint = (file: string) =>
  spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/dockerfile-utils/bin/dockerfile-utils"), "lint", file],
    {
      encoding: "utf8",
      timeout: 60_000,
    },
  );

t.test("the runtime installs exactly the Debian packages of TOOLS", async (t) => {
  const want = [...new Set(Object.values(TOOLS).map((x) => x.debianPackage))].sort();
  const got = aptPackages();
  t.same([...got].sort(), want, "apt-get install line == TOOLS' debianPackage set");
  t.same(
    aptPackages(stage("build")).sort(),
    ["gcc", "libc6-dev"],
    "the build stage: a compiler for agent/native, nothing else",
  );
  t.equal(new Set(got).size, got.length, "no package twice");
  t.ok(want.includes("iptables"), "iptables (legacy and nft backends in one Debian package)");
  t.match(dockerfile, /--no-install-recommends/, "no recommended extras");
  t.match(dockerfile, /rm -rf \/var\/lib\/apt\/lists/, "apt lists not shipped");
});

t.test(
  "multi-stage: build through the tested script, Debian slim Node runtime of the pinned line",
  async (t) => {
    t.equal(stages().length, 3, "three stages: kube-proxy's nft, build, runtime");
    const pinned = readFileSync(join(ROOT, ".node-version"), "utf8").trim();
    t.match(
      dockerfile,
      new RegExp(`^ARG NODE_VERSION=${pinned.replace(/\./g, "\\.")}$`, "m"),
      `node ${pinned}, .node-version's`,
    );
    t.match(dockerfile, /^ARG NODE_DIGEST=$/m, "the digest a build argument, empty by default");
    t.match(
      dockerfile,
      /^ARG NODE_IMAGE=node:\$\{NODE_VERSION\}-trixie-slim\$\{NODE_DIGEST\}$/m,
      "node:VERSION-trixie-slim (its nft reads what nft >= 1.1.2 hosts write), @DIGEST when given",
    );
    t.same(
      instructions.filter((i) => /^FROM\s/.test(i)).map((i) => i.split(/\s+/)[1]),
      ["${BOOKWORM_IMAGE}", "${NODE_IMAGE}", "${NODE_IMAGE}"],
      "build and runtime on that image, kube-proxy's nft from bookworm",
    );
    t.ok(
      instructions.some((i) =>
        /^RUN\s+PROXYSCOPE_REVISION="\$\{REVISION\}" sh scripts\/build-image-app\.sh \/out$/.test(i),
      ),
      "build stage runs scripts/build-image-app.sh, given the REVISION build argument (the context has no .git)",
    );
    const runtime = lastStage();
    t.ok(
      runtime.some((i) => /^COPY --from=build \/out \/app$/.test(i)),
      "runtime takes only the built app",
    );
    t.ok(
      runtime.some((i) => /^USER 10001(:10001)?$/.test(i)),
      "non-root by default",
    );
    t.ok(
      runtime.some((i) => /^HEALTHCHECK .*\/healthz/.test(i)),
      "HEALTHCHECK on /healthz",
    );
    for (const l of ["title", "description", "version", "licenses", "revision"]) {
      t.ok(
        runtime.some((i) => i.startsWith("LABEL") && i.includes(`org.opencontainers.image.${l}=`)),
        `OCI label ${l}`,
      );
    }
    t.ok(runtime.some((i) => i === 'ENTRYPOINT ["proxyscope-agent"]'));
    const ignore = readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n");
    for (const p of ["node_modules", "dist", ".git"]) t.ok(ignore.includes(p), `.dockerignore has ${p}`);
  },
);

t.test("kube-proxy's nft (bookworm's 1.0.6) as a witness: staged apart, never on PATH as nft", async (t) => {
  t.match(dockerfile, /^ARG BOOKWORM_DIGEST=$/m, "the digest a build argument, empty by default");
  t.match(dockerfile, /^ARG BOOKWORM_IMAGE=debian:bookworm-slim\$\{BOOKWORM_DIGEST\}$/m);
  const witness = stage("kube-proxy-nft");
  t.same(aptPackages(witness), ["nftables"], "bookworm's nftables package, nothing else");
  t.ok(
    witness.some((i) =>
      /^RUN\s+sh \/stage-kube-proxy-nft\.sh \/out\/nft-kube-proxy \/usr\/sbin\/nft$/.test(i),
    ),
    "staged by scripts/stage-kube-proxy-nft.sh (stage-kube-proxy-nft.test.ts)",
  );
  const runtime = lastStage();
  const copies = runtime.filter((i) => /^COPY --from=kube-proxy-nft\s/.test(i));
  t.same(copies, ["COPY --from=kube-proxy-nft /out/nft-kube-proxy /opt/nft-kube-proxy"]);
  t.equal(DEFAULT_WITNESS_DIR, "/opt/nft-kube-proxy", "where the agent looks for it");
  for (const d of DEFAULT_TOOL_DIRS) t.notOk(DEFAULT_WITNESS_DIR.startsWith(`${d}/`), `not under ${d}`);
});

t.test("dockerfile-utils lint: clean, and it does catch a broken Dockerfile", async (t) => {
  const r = lint(join(ROOT, "Dockerfile"));
  t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  t.equal(r.stdout.trim(), "", "no diagnostics");
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-dockerfile-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bad = join(dir, "Dockerfile");
  writeFileSync(bad, dockerfile.replace("EXPOSE 9977", "EXPOSE metrics"));
  const rb = lint(bad);
  t.not(rb.status, 0, "linter rejects an invalid EXPOSE");
  t.match(rb.stdout + rb.stderr, /EXPOSE metrics/);
});
