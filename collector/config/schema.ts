import { z } from "zod";
import {
  baseUrl,
  count,
  durationMs,
  durationS,
  listenHost,
  nodeName,
  port,
} from "../../common/flag-bounds.js";
import { parseTargetVersion } from "../checks/target-version.js";
import { FAIL_ON_VALUES } from "../report/fail-on.js";
import { targetsFromFlags } from "../sources/static.js";
import { COLOR_WHEN } from "../../common/colour.js";
import { FORMATS, SOURCES } from "./formats.js";

// One schema for every flag: a bad setting is named in one line before anything runs.
/** How the collector reaches an agent: its pod IP, or the API server's pod proxy (from a laptop). */
export const AGENT_ACCESS = ["auto", "direct", "proxy"] as const;

export const CollectorConfig = z.object({
  source: z.enum(SOURCES),
  kubeconfig: z.string().min(1).nullable(),
  context: z.string().min(1).nullable(),
  kubeProxyNamespace: z.string().min(1),
  agentNamespace: z.string().min(1),
  agentSelector: z.string().min(1),
  agentPort: port(1),
  agentAccess: z.enum(AGENT_ACCESS),
  // Checked here, not when the gather starts: a bad value is a usage error (exit 2), not "no report".
  agents: z.array(z.string()).superRefine((urls, ctx) => {
    const bad = targetsFromFlags(urls).errors[0];
    if (bad !== undefined) ctx.addIssue({ code: "custom", message: bad });
  }),
  agentsFile: z.string().min(1).nullable(),
  /** report --from-files: saved node reports (files or directories) instead of a gather. */
  fromFiles: z.array(z.string().min(1, "must not be empty")),
  /** report --demo: the sample fleet shipped with proxyscope. */
  demo: z.boolean(),
  /** report --accept-file: findings accepted, with a reason (report/accept.ts). */
  acceptFile: z.string().min(1).nullable(),
  prometheusUrl: baseUrl.nullable(),
  prometheusNodeLabel: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, "must be a Prometheus label name"),
  output: z.enum(FORMATS),
  failOn: z.enum(FAIL_ON_VALUES).nullable(),
  /** report --changes: what the switch changes for each Service instead of the fleet report. */
  changes: z.boolean(),
  concurrency: count(1, 1024).nullable(),
  // Bounded: above MAX_TIMER_MS a Node timer fires after 1 ms.
  timeoutMs: durationMs(),
  color: z.enum(COLOR_WHEN),
  listen: listenHost,
  port: port(0),
  intervalS: durationS(),
  detailFrom: z.enum(["loopback", "any"]),
  webConfigFile: z.string().min(1).nullable(),
  service: z
    .string()
    .regex(/^[a-z0-9-]+\/[a-z0-9.-]+$/, "must be NAMESPACE/NAME")
    .nullable(),
  servicePort: z.string().nullable(),
  node: nodeName.nullable(),
  /** scan-node: the agent's image its pod runs. */
  image: z
    .string()
    .min(1)
    .max(512)
    .regex(/^[^\s\p{Cc}]+$/u, "must be an image reference without spaces or control characters"),
  /** scan-node: how long its pod may take, image pull included. */
  waitS: durationS(),
  targetVersion: z
    .string()
    .nullable()
    .transform((s, ctx) => {
      if (s === null) return null;
      const v = parseTargetVersion(s);
      if (v === null)
        ctx.addIssue({ code: "custom", message: "must be a Kubernetes version like 1.40 or v1.43.0" });
      return v;
    }),
});
export type CollectorConfig = z.infer<typeof CollectorConfig>;
