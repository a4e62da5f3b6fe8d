import { readFileSync } from "node:fs";
import { parseIpvsConn } from "../../agent/parse/ipvs-conn.js";
import { parseIpvsProc } from "../../agent/parse/ipvs-proc.js";
import type { NodeFacts } from "../../agent/report/schema.js";
import { addresses, ipvsNode } from "./rules.js";

// The node test/fixtures/ipvs/conn/live was recorded on (UML 6.1, see the README there): its IPVS table
// and connection table as the kernel printed them, its kube-ipvs0 and eth0 addresses as the recorder
// set them. Real kernel state for the rules, read through the agent's own parsers.
const read = (rel: string) => readFileSync(new URL(`../fixtures/ipvs/conn/${rel}`, import.meta.url), "utf8");

export function recordedConnFacts(
  scenario: "live" | "idle" = "live",
): Pick<NodeFacts, "ipvs" | "ipvsConnections" | "kubeIpvs0" | "addresses"> {
  const table = parseIpvsProc(read(`${scenario}/proc/net/ip_vs`));
  const conns = parseIpvsConn(read(`${scenario}/proc/net/ip_vs_conn`));
  if (!table.ok || !conns.ok) throw new Error("the recorded fixture no longer parses");
  const base = addresses("172.18.0.10", ["192.168.50.100"]);
  const kubeIpvs0 = ["10.96.143.30", "10.96.0.10", "10.96.143.31", "fd00:10:96::1e"];
  return {
    ipvs: {
      available: true,
      virtualServerCount: table.value.virtualServers.length,
      realServerCount: table.value.realServerCount,
      schedulers: table.value.schedulers,
      virtualServers: table.value.virtualServers,
      timeouts: { tcp: 900, tcpFin: 120, udp: 300 },
    },
    ipvsConnections: { available: true, ...conns.value },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: ["BROADCAST", "NOARP"],
      addresses: kubeIpvs0.map((address) => ({
        family: address.includes(":") ? ("inet6" as const) : ("inet" as const),
        address,
        prefixLen: address.includes(":") ? 128 : 32,
      })),
    },
    addresses: base,
  };
}

/** An ipvs-mode node with the recorded tables. */
export const recordedConnNode = (over: Partial<NodeFacts> = {}) =>
  ipvsNode({ ...recordedConnFacts(), ...over });
