// Who reaps what the agent's killed tools leave (manifests/core/agent-daemonset.yaml, shareProcessNamespace).
// A tool wrapped in a shell runs as the shell's child; a call past its deadline ends with the whole group
// killed, and the child, orphaned as its parent dies, goes to PID 1 of the PID namespace. As PID 1 of its
// container (the default) the agent never waits for it: a zombie for the pod's life, one per such call.
// With shareProcessNamespace the pod's pause container is PID 1 and reaps it. Real PID namespaces
// (unshare --pid) and the built agent; pause is stood in for by test/helpers/pause/pause-standin.c
// (pause.c's reaping: waitpid(-1) on every child).
import t, { type Test } from "tap";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startAgent, type RunningAgent } from "../e2e/agent-process.js";
import { staleBuild } from "../helpers/built.js";
import { hangingToolDir } from "../helpers/hanging-tools.js";
import { childrenOf, untilEmpty } from "../helpers/procs.js";

const PAUSE = fileURLToPath(new URL("../../dist/test-helpers/pause-standin", import.meta.url));
const UNSHARE = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"];
const NOWHERE = "http://127.0.0.1:9";
const SCANS = 3;

t.equal(staleBuild(["agent/cli.ts", "agent/io/run.ts"]), null, "dist/ is built and current");
t.ok(existsSync(PAUSE), "the pause stand-in is built (scripts/build-native.sh)");

/** The agent in a PID namespace of its own, every tool a shell whose child never answers. */
async function agentInPidNamespace(t: Test, init: string[]): Promise<RunningAgent> {
  const tools = hangingToolDir("never-answers");
  t.teardown(tools.remove);
  const agent = await startAgent({
    wrap: [...UNSHARE, ...init],
    args: [
      ...["--tool-dir", tools.dir, "--scan-interval-s", "1"],
      ...["--kube-proxy-metrics-url", NOWHERE, "--kube-proxy-health-url", NOWHERE],
      ...["--call-timeout-ms", "1000", "--probe-timeout-ms", "2000"],
    ],
  });
  t.teardown(async () => {
    // unshare waits with SIGTERM blocked: end the namespace's PID 1, and with it the namespace.
    for (const p of childrenOf(agent.pid)) process.kill(p.pid, "SIGTERM");
    await agent.stop();
  });
  await agent.scans(SCANS);
  const report = JSON.parse((await agent.get("/report")).body) as {
    probes: Record<string, { error?: { kind: string } }>;
  };
  const timedOut = Object.values(report.probes).filter((p) => p.error?.kind === "timeout").length;
  t.ok(timedOut > 0, `tool calls ended at their deadline, their groups killed (${timedOut} probes)`);
  return agent;
}

const zombiesUnder = (pids: number[]) => pids.flatMap((p) => childrenOf(p)).filter((c) => c.state === "Z");

t.test(
  "the agent as PID 1 (a container's default): every killed wrapper's child stays a zombie",
  async (t) => {
    const agent = await agentInPidNamespace(t, []);
    const [init] = childrenOf(agent.pid);
    t.ok(init?.cmdline.includes("cli.js serve"), `PID 1 of the namespace is the agent: ${init?.cmdline}`);
    const zombies = zombiesUnder([init!.pid]);
    t.ok(zombies.length >= SCANS, `${zombies.length} zombies under the agent after ${SCANS} scans`);
  },
);

t.test("pause as PID 1 (shareProcessNamespace): none stays", async (t) => {
  const agent = await agentInPidNamespace(t, [PAUSE]);
  const [init] = childrenOf(agent.pid);
  t.equal(init?.cmdline.split(" ")[0], PAUSE, "PID 1 of the namespace is the pause stand-in");
  const node = childrenOf(init!.pid).find((c) => c.cmdline.includes("cli.js serve"));
  t.ok(node, "the agent runs under it");
  // Reaped as each arrives: polled until none, the limit only for a stuck run.
  const zombies = await untilEmpty(() => zombiesUnder([init!.pid, node!.pid]));
  t.same(zombies, [], "no zombie under pause or the agent");
});
