import t from "tap";
import { md } from "../../../common/escape.js";
import { autolinkIn, splitCodeSpans } from "../../helpers/gfm.js";

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

t.test("md: a URL, a www. name or an e-mail address a node supplies is never a GFM autolink", async (t) => {
  const inputs = [
    "http://10.0.0.7:9977/report/fleet: unreachable (after one retry)",
    "HTTPS://evil.example/phish",
    "see www.evil.example/login now",
    "mail ops@evil.example or mailto:ops@evil.example",
    "(http://a.example) *www.b.example* _c@d.example_",
    "a|http://x.example/|b",
    "``http://x.example/`",
    "x\\http://y.example/",
    "ftp://files.example/",
  ];
  for (const s of inputs) {
    const out = md(s);
    const { code, text } = splitCodeSpans(out);
    t.equal(autolinkIn(text), null, `${JSON.stringify(s)} -> ${out}`);
    // Each such word is shown as it was, in code.
    for (const w of s.split(/[\s|]+/).filter((w) => /:\/\/|www\.|@/.test(w)))
      t.ok(code.includes(w), `${JSON.stringify(w)} in code: ${out}`);
  }
  t.equal(md("www.example.org"), "`www.example.org`");
  t.equal(md("a http://h/ b"), "a `http://h/` b");
  t.equal(md("``http://h/`"), "``` ``http://h/` ```");
  t.equal(md("a|http://h/"), "a\\|`http://h/`");
  t.equal(md("plain text"), "plain text", "words without a trigger stay text");
});
