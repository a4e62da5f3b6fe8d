import t from "tap";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../helpers/uml.js";

// test/kube-proxy/build.mjs: the build module it generates, and its named errors (no build runs here).

const BUILD = join(REPO_ROOT, "test/kube-proxy/build.mjs");
const { buildGoMod } = (await import(BUILD)) as {
  buildGoMod: (version: string, kubernetesGoMod: string) => string;
};

// The shape of k8s.io/kubernetes' own go.mod (v1.34.4: its go/godebug lines, staging replaces).
const K8S_GO_MOD = `module k8s.io/kubernetes

go 1.24.0

godebug default=go1.24

require (
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/kube-proxy => ./staging/src/k8s.io/kube-proxy
)
`;

t.test("each staging replace points at the published v0.<minor>.<patch>, go and godebug kept", (t) => {
  const mod = buildGoMod("v1.34.4", K8S_GO_MOD);
  t.match(mod, /^go 1\.24\.0$/m);
  t.match(mod, /^godebug default=go1\.24$/m);
  t.match(mod, /^require k8s\.io\/kubernetes v1\.34\.4$/m);
  t.match(mod, /^\tk8s\.io\/api => k8s\.io\/api v0\.34\.4$/m);
  t.match(mod, /^\tk8s\.io\/client-go => k8s\.io\/client-go v0\.34\.4$/m);
  t.notMatch(mod, /\.\/staging/);
  t.end();
});

t.test("the one staging module the module proxy lacks at v1.31.14 is taken at its newest patch", (t) => {
  t.match(buildGoMod("v1.31.14", K8S_GO_MOD), /^\tk8s\.io\/kube-proxy => k8s\.io\/kube-proxy v0\.31\.11$/m);
  t.end();
});

t.test("a go.mod without staging replaces is a named error", (t) => {
  t.throws(() => buildGoMod("v1.34.4", "module k8s.io/kubernetes\n\ngo 1.24.0\n"), {
    name: "BuildError",
    message: /no \.\/staging replace/,
  });
  t.end();
});

t.test("no go on PATH: the command and why, exit 1, nothing left in the cache", (t) => {
  const cache = mkdtempSync(join(tmpdir(), "proxyscope-kpcache-"));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  const r = spawnSync(process.execPath, [BUILD, "v1.34.4"], {
    encoding: "utf8",
    env: { PATH: "/nonexistent", HOME: cache, XDG_CACHE_HOME: cache },
  });
  t.equal(r.status, 1);
  t.match(r.stderr, /kube-proxy build: `go version` failed: go not found on PATH/);
  const dir = join(cache, "proxyscope/kube-proxy/v1.34.4");
  t.same(existsSync(dir) ? readdirSync(dir) : [], [], "no build module or partial binary left");
  t.end();
});

t.test("not a release version: named, before anything runs", (t) => {
  const r = spawnSync(process.execPath, [BUILD, "latest"], { encoding: "utf8" });
  t.equal(r.status, 1);
  t.match(r.stderr, /`build latest` failed: not a release version like v1\.34\.4/);
  t.end();
});
