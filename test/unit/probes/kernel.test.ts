import t from "tap";
import { kernelProbe } from "../../../agent/probes/kernel.js";
import { fixture, probeContext, tree } from "../../helpers/probe-context.js";

// The running kernel from /proc/sys/kernel/osrelease (recorded on this machine and in a UML guest).

t.test("kernel: recorded releases, vendor suffix kept", async (t) => {
  t.same(await kernelProbe.run(probeContext()), {
    ok: true,
    facts: { release: "6.18.44-fc-v595", major: 6, minor: 18, patch: 44 },
  });
  const uml = await kernelProbe.run(probeContext({ procRoot: fixture("uml-6.1/proc") }));
  t.same(uml.ok && [uml.facts.major, uml.facts.minor, uml.facts.patch], [6, 1, 176]);
});

t.test("kernel: a missing or garbled osrelease fails the probe with a named error", async (t) => {
  const missing = await kernelProbe.run(probeContext({ procRoot: tree(t) }));
  t.equal(!missing.ok && missing.error.kind, "io");
  const bad = tree(t, { sys: { kernel: { osrelease: "<html>502</html>\n" } } });
  const g = await kernelProbe.run(probeContext({ procRoot: bad }));
  t.same(!g.ok && [g.error.kind, g.error.command], ["garbage", `${bad}/sys/kernel/osrelease`]);
});
