// -o json and -o yaml (scan, verify, report) go to terminals too: a character a terminal acts on that
// JSON.stringify and the yaml library print raw (C1 controls such as CSI U+009B, DEL, the line and bidi
// controls) is written as a \uXXXX escape, which reads back as the same string.
import t from "tap";
import { parse } from "yaml";
import { renderStructured } from "../../../common/structured.js";

t.test("json and yaml: no raw terminal control, and the same value read back", async (t) => {
  const shared = { z: 1 };
  const v = {
    node: "n\u009b2J\u001b]0;x\u0007",
    "key\u0085": "v\u2028w\u202ex\u007f",
    list: ["plain", `${"y".repeat(120)}\u009b${"z".repeat(120)}`],
    shared,
    again: shared,
  };
  for (const f of ["json", "yaml"] as const) {
    const out = renderStructured(v, f);
    // eslint-disable-next-line no-control-regex
    t.notMatch(out, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/, f);
    t.same(f === "json" ? JSON.parse(out) : parse(out), v, `${f} reads back as the same value`);
  }
  t.equal(renderStructured({ a: "plain" }, "yaml"), "a: plain\n", "other strings keep their style");
});
