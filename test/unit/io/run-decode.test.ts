// ToolRunner.run decodes stdout as it arrives (agent/io/run.ts: no chunk list held for a whole
// listing); a multi-byte character split between two pipe reads must still come out whole, and a
// large answer must come out byte for byte.
import t from "tap";
import { toolDir } from "../../helpers/tool-scripts.js";

t.test("a large answer of multi-byte characters comes out exactly as printed", async (t) => {
  // 3-byte and 2-byte characters: pipe reads of 64 KiB cannot all end on a character boundary.
  const line = `{"chain": {"name": "日本-é-${"x".repeat(37)}"}}\n`;
  const stdout = line.repeat(40_000); // ~2.5 MB, dozens of pipe reads
  const d = toolDir({ nft: { stdout } });
  t.teardown(d.remove);
  const r = await d.runner.run("nft", [], { timeoutMs: 120_000, maxBytes: 64 * 1024 * 1024 });
  t.ok(r.ok, JSON.stringify(r.ok ? "" : r.error));
  if (!r.ok) return;
  t.equal(r.stdout.length, stdout.length, "as many characters");
  t.ok(r.stdout === stdout, "the same text");
  t.notOk(r.stdout.includes("\ufffd"), "no replacement character where a read split a character");
});

t.test("the output cap still stops the call", async (t) => {
  const d = toolDir({ nft: { stdout: "é".repeat(300_000) } });
  t.teardown(d.remove);
  const r = await d.runner.run("nft", [], { timeoutMs: 120_000, maxBytes: 100_000 });
  t.equal(r.ok ? "ok" : r.error.kind, "output-cap");
});
