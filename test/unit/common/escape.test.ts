import t from "tap";
import { md } from "../../../common/escape.js";

t.test("md: apostrophes and quotes are text, not entities escaped twice", async (t) => {
  t.equal(md("kube-proxy's"), "kube-proxy's");
  t.equal(md('say "nftables"'), 'say "nftables"');
});

t.test("md: what would change a table or start markup is escaped", async (t) => {
  t.equal(md("a|b"), "a\\|b");
  t.equal(md("`x` *y* _z_ [l](u) #h"), "\\`x\\` \\*y\\* \\_z\\_ \\[l\\](u) \\#h");
  t.equal(md("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
  t.equal(md("a & b"), "a &amp; b");
  t.equal(md("one\ntwo\r\nthree"), "one two three");
});
