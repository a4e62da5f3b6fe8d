import t from "tap";
import { readNftGeneration } from "../../../agent/io/nft-generation.js";
import { parseNftGeneration } from "../../../agent/parse/nft-generation.js";
import { toolDir } from "../../helpers/tool-scripts.js";

// proxyscope-nft-generation's answer, and each way it can fail becoming a named failure (the real
// program against a real kernel: test/kernel/scan-cache-netns.test.ts).

t.test("the answer: one 32-bit decimal", async (t) => {
  t.same(parseNftGeneration("12\n"), { ok: true, value: 12 });
  t.same(parseNftGeneration("4294967295\n"), { ok: true, value: 4294967295 });
  for (const bad of ["", "\n", "-1\n", "12 13\n", "4294967296\n", "0x10\n", "12\n\n", "twelve"])
    t.match(parseNftGeneration(bad), { ok: false, error: /not a generation id/ }, JSON.stringify(bad));
});

t.test("failures are named, never a generation", async (t) => {
  const tools = toolDir({
    "proxyscope-nft-generation": {
      stderr: "proxyscope-nft-generation: socket(AF_NETLINK, NETLINK_NETFILTER): Protocol not supported\n",
      exit: 3,
    },
  });
  t.teardown(tools.remove);
  t.match(await readNftGeneration(tools.runner, 5000), {
    ok: false,
    error: { kind: "exit-status", message: /^kernel without nf_tables \(proxyscope-nft-generation exited 3/ },
  });
  const garbage = toolDir({ "proxyscope-nft-generation": { stdout: "<html>\n" } });
  t.teardown(garbage.remove);
  t.match(await readNftGeneration(garbage.runner, 5000), {
    ok: false,
    error: { kind: "garbage", message: /not a generation id: "<html>\\n"/ },
  });
  const denied = toolDir({
    "proxyscope-nft-generation": {
      stderr: "proxyscope-nft-generation: NFT_MSG_GETGEN: Operation not permitted\n",
      exit: 2,
    },
  });
  t.teardown(denied.remove);
  t.match(await readNftGeneration(denied.runner, 5000), { ok: false, error: { kind: "not-permitted" } });
  const none = toolDir({});
  t.teardown(none.remove);
  t.match(await readNftGeneration(none.runner, 5000), {
    ok: false,
    error: { kind: "missing-tool", message: /proxyscope-nft-generation not found in / },
  });
  const ok = toolDir({ "proxyscope-nft-generation": { stdout: "4711\n", args: "" } });
  t.teardown(ok.remove);
  t.same(await readNftGeneration(ok.runner, 5000), { ok: true, generation: 4711 });
  t.same(ok.calls(), ["proxyscope-nft-generation "], "no arguments");
});
