// One Node.js line everywhere: .node-version pins it once; the engines range, @types/node, the image's
// base, scripts/setup-debian.sh (which installs it on a fresh Debian) and CI all follow that pin.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { ROOT } from "./lib.js";

const read = (p: string) => readFileSync(join(ROOT, p), "utf8");
const pinned = read(".node-version").trim();
const major = pinned.split(".")[0]!;
const pkg = JSON.parse(read("package.json")) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(read("package-lock.json")) as {
  packages: Record<string, { version?: string; engines?: Record<string, string> }>;
};

t.test(".node-version is one exact version", async (t) => {
  t.match(pinned, /^\d+\.\d+\.\d+$/, "x.y.z, nothing else (setup-debian.sh installs exactly this)");
});

t.test("the test suite runs on the pinned line", async (t) => {
  t.equal(process.versions.node.split(".")[0], major, `node ${process.version} is the ${major} line`);
});

t.test("engines, @types/node and the lockfile follow the pin", async (t) => {
  t.equal(pkg.engines.node, `>=${major}`);
  t.equal(lock.packages[""]?.engines?.node, `>=${major}`, "package-lock.json in step");
  t.match(pkg.devDependencies["@types/node"], new RegExp(`^\\^${major}\\.`), "@types/node of the same line");
  t.equal(lock.packages["node_modules/@types/node"]?.version?.split(".")[0], major, "installed @types/node");
});

t.test("setup-debian.sh installs the pinned Node from .node-version, and nothing else pins it", async (t) => {
  const sh = read("scripts/setup-debian.sh");
  t.match(sh, /node_version="\$\(tr -d '\[:space:\]' <\.node-version\)"/, "reads .node-version");
  t.match(sh, /npm install --prefix "\$node_prefix"/, "installs into a fixed prefix");
  t.match(sh, /"node-linux-\$\{arch\}@\$\{node_version\}"/, "the official binary package, pinned version");
  t.match(sh, /ln -sfn "\$node_bin" \/usr\/local\/bin\/node/, "linked as /usr/local/bin/node");
  t.match(sh, /libatomic1/, "Node's Linux builds need libatomic");
  t.notMatch(sh, new RegExp(pinned.replace(/\./g, "\\.")), "no second copy of the version");
  const ci = read(".ci/run");
  t.match(ci, /scripts\/setup-debian\.sh --test/);
  t.match(ci, /export PATH="\/usr\/local\/bin:\$PATH"/, "the suite runs on the installed Node");
  t.match(ci, /node --version/, "and says which");
});
