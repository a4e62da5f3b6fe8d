// A password in a URL (a flag's, a kubeconfig server's) or a token in its query string must not reach
// an error, a log or a report. common/redact.ts is the one function; common/http.ts, the probes'
// failures and the collector's observations all show URLs through it.
import t from "tap";
import { createServer } from "node:http";
import { hasUserinfo, redactUrls } from "../../../common/redact.js";
import { httpGet, httpGetVia } from "../../../common/http.js";
import { runProbes } from "../../../agent/scan.js";
import { kubeProxyModeProbe } from "../../../agent/probes/kube-proxy-mode.js";
import { kubeProxyHealthProbe } from "../../../agent/probes/kube-proxy-health.js";
import { probeContext, probeSettings } from "../../helpers/probe-context.js";

t.test("redactUrls: userinfo and secret-looking query values, wherever a URL sits in the text", async (t) => {
  t.equal(redactUrls("http://user:pw@127.0.0.1:10249/metrics"), "http://***@127.0.0.1:10249/metrics");
  t.equal(redactUrls("GET https://tok@api.example:6443 failed"), "GET https://***@api.example:6443 failed");
  // WHATWG URL takes the last "@" of the authority: all of "p@ss" is the password.
  t.equal(redactUrls("http://u:p@ss@h/x"), "http://***@h/x");
  t.equal(
    redactUrls("http://h/api?query=up&access_token=abc123&x=1"),
    "http://h/api?query=up&access_token=***&x=1",
  );
  t.equal(redactUrls("http://h/?X-Amz-Signature=deadbeef"), "http://h/?X-Amz-Signature=***");
  // Nothing else changes: an address, a path, an "@" in prose.
  for (const s of ["http://10.0.0.7:9977/report/fleet: unreachable", "node a@b said", 'up{job="x"}'])
    t.equal(redactUrls(s), s);
  t.equal(redactUrls(redactUrls("http://u:p@h/")), "http://***@h/", "idempotent");
  t.ok(hasUserinfo("http://u:p@h/"));
  t.ok(hasUserinfo("http://u@h/"));
  t.notOk(hasUserinfo("http://h/"));
  t.notOk(hasUserinfo("not a url"));
});

t.test("httpGet and httpGetVia: a URL's password is in no failure they return", async (t) => {
  // fetch refuses a URL with credentials and quotes it in its error: that text must be redacted too.
  const a = await httpGet("http://user:s3cret@127.0.0.1:1/proxyMode", { timeoutMs: 30_000, maxBytes: 10 });
  t.equal(a.ok, false);
  t.notMatch(JSON.stringify(a), /s3cret/);
  t.match(JSON.stringify(a), /http:\/\/\*\*\*@127\.0\.0\.1:1\/proxyMode/);
  // A real server that answers too much: the cap's message names the URL, redacted.
  const srv = createServer((_q, r) => r.end("x".repeat(100)));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  t.teardown(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const b = await httpGetVia(
    `http://user:s3cret@127.0.0.1:${port}/x?token=t0ken`,
    { headers: {} },
    { timeoutMs: 30_000, maxBytes: 10 },
  );
  t.equal(b.ok, false);
  t.notMatch(JSON.stringify(b), /s3cret|t0ken/);
  t.match(!b.ok && b.error.kind, "output-cap");
});

t.test("a probe's failure names kube-proxy's URL with its secrets redacted", async (t) => {
  // A stand-in kube-proxy that knows no route: each probe's own "answered 404" message quotes the URL.
  const srv = createServer((_q, r) => {
    r.statusCode = 404;
    r.end("404 page not found\n");
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  t.teardown(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const base = `http://127.0.0.1:${port}/?access_token=t0ken`;
  const runs = await runProbes(
    {
      ...probeContext(),
      ...probeSettings({ kubeProxyMetricsUrl: base, kubeProxyHealthUrl: base }),
      probeTimeoutMs: 30_000,
    },
    [kubeProxyModeProbe, kubeProxyHealthProbe],
  );
  for (const r of runs) {
    t.equal(r.outcome.ok, false, r.name);
    t.match(JSON.stringify(r.outcome), /answered 404/, r.name);
    t.notMatch(JSON.stringify(r.outcome), /t0ken/, r.name);
  }
});
