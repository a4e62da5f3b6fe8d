// The manifests: valid against the Kubernetes and Prometheus Operator OpenAPI models, no unknown fields,
// kustomize renders them, and the least-privilege and wiring rules the design asks for hold.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import t from "tap";
import {
  K8sObject,
  MANIFESTS,
  ROOT,
  kustomizeBuild,
  manifestObjects,
  unknownFieldDiagnostics,
  validateAgainstSchema,
} from "./lib.js";

const all = manifestObjects();
const objs = all.map((x) => x.obj);
const id = (o: K8sObject) => `${o.kind}/${o.metadata.namespace ?? "-"}/${o.metadata.name}`;
const find = (kind: string, name: string, namespace?: string): K8sObject => {
  const o = objs.find(
    (x) =>
      x.kind === kind &&
      x.metadata.name === name &&
      (namespace === undefined || x.metadata.namespace === namespace),
  );
  if (o === undefined) throw new Error(`no ${kind} ${namespace ?? ""}/${name} in manifests/`);
  return o;
};
const pkgVersion = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string })
  .version;

t.test("every manifest validates against its OpenAPI model", async (t) => {
  t.ok(objs.length >= 14, `found ${objs.length} objects`);
  for (const { file, obj } of all) {
    t.equal(await validateAgainstSchema(obj), null, `${file}: ${id(obj)}`);
  }
});

t.test("no manifest has a field the API does not know", async (t) => {
  const diags = unknownFieldDiagnostics(objs);
  all.forEach(({ file, obj }, i) => t.equal(diags[i], "", `${file}: ${id(obj)}`));
});

t.test("the checkers catch a typo'd field and a wrong type", async (t) => {
  const ds = structuredClone(find("DaemonSet", "proxyscope-agent"));
  ds.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true;
  const [diag] = unknownFieldDiagnostics([ds]);
  t.match(diag, /readOnlyRootFileSystem/, "unknown field named");
  const bad = structuredClone(find("DaemonSet", "proxyscope-agent"));
  bad.spec.template.spec.containers[0].ports[0].containerPort = "9977x";
  t.match(await validateAgainstSchema(bad), /containerPort must be integer/);
  const sm = structuredClone(find("ServiceMonitor", "proxyscope-agent"));
  sm.spec.endpoints[0].relabelings[0].action = "rename";
  t.not(await validateAgainstSchema(sm), null, "ServiceMonitor relabel action outside the CRD's enum");
});

t.test("kustomize renders the base, the core part and the no-dpkg component", async (t) => {
  const full = kustomizeBuild(MANIFESTS);
  if ("error" in full) throw new Error(`kustomize build manifests: ${full.error}`);
  t.same(full.objects.map(id).sort(), objs.map(id).sort(), "renders exactly the objects in manifests/");
  for (const o of full.objects) {
    t.equal(o.metadata.labels?.["app.kubernetes.io/part-of"], "proxyscope", `${id(o)} labelled part-of`);
    t.equal(await validateAgainstSchema(o), null, `rendered ${id(o)} still valid`);
  }
  const inKubeSystem = full.objects.filter((o) => o.metadata.namespace === "kube-system").map(id);
  t.same(
    inKubeSystem.sort(),
    ["Role/kube-system/proxyscope-collector", "RoleBinding/kube-system/proxyscope-collector"],
    "the kube-system grants stay in kube-system",
  );
  for (const o of full.objects.filter(
    (o) => o.metadata.namespace !== "kube-system" && o.metadata.namespace,
  )) {
    t.equal(o.metadata.namespace, "proxyscope", `${id(o)} in proxyscope`);
  }
  const images = full.objects
    .filter((o) => o.kind === "DaemonSet" || o.kind === "Deployment")
    .flatMap((o) => o.spec.template.spec.containers.map((c: { image: string }) => c.image));
  t.same(
    images,
    [`proxyscope:${pkgVersion}`, `proxyscope:${pkgVersion}`],
    "image tag is the package version",
  );
  const ds = full.objects.find((o) => o.kind === "DaemonSet")!;
  t.same(
    ds.spec.selector.matchLabels,
    { "app.kubernetes.io/name": "proxyscope-agent" },
    "selector untouched",
  );

  const core = kustomizeBuild(join(MANIFESTS, "core"));
  if ("error" in core) throw new Error(`kustomize build manifests/core: ${core.error}`);
  t.notOk(
    core.objects.some((o) => o.apiVersion.startsWith("monitoring.coreos.com/")),
    "core needs no Prometheus Operator CRD",
  );

  const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const overlay = mkdtempSync(join(tmpdir(), "proxyscope-overlay-"));
  t.teardown(() => rmSync(overlay, { recursive: true, force: true }));
  writeFileSync(
    join(overlay, "kustomization.yaml"),
    `resources: [${JSON.stringify(relative(overlay, MANIFESTS))}]\n` +
      `components: [${JSON.stringify(relative(overlay, join(MANIFESTS, "components/no-dpkg")))}]\n`,
  );
  const noDpkg = kustomizeBuild(overlay);
  if ("error" in noDpkg) throw new Error(`overlay with no-dpkg: ${noDpkg.error}`);
  const ds2 = noDpkg.objects.find((o) => o.kind === "DaemonSet")!;
  const paths = ds2.spec.template.spec.volumes.map((v: { hostPath?: { path: string } }) => v.hostPath?.path);
  t.notOk(paths.includes("/var/lib/dpkg/status"), "no dpkg volume");
  t.ok(paths.includes("/etc/os-release"), "the other host mounts stay");
  t.notOk(
    ds2.spec.template.spec.containers[0].volumeMounts.some(
      (m: { name: string }) => m.name === "host-dpkg-status",
    ),
    "no dpkg mount",
  );
  t.equal(await validateAgainstSchema(ds2), null, "patched DaemonSet valid");

  const webOverlay = mkdtempSync(join(tmpdir(), "proxyscope-overlay-web-"));
  t.teardown(() => rmSync(webOverlay, { recursive: true, force: true }));
  writeFileSync(
    join(webOverlay, "kustomization.yaml"),
    `resources: [${JSON.stringify(relative(webOverlay, MANIFESTS))}]\n` +
      `components: [${JSON.stringify(relative(webOverlay, join(MANIFESTS, "components/web-config")))}]\n`,
  );
  const web = kustomizeBuild(webOverlay);
  if ("error" in web) throw new Error(`overlay with web-config: ${web.error}`);
  const ds3 = web.objects.find((o) => o.kind === "DaemonSet")!;
  const c3 = ds3.spec.template.spec.containers[0];
  t.ok(c3.args.includes("--web.config.file=/etc/proxyscope/web/web-config.yml"), "the flag");
  const mount = c3.volumeMounts.find((m: { name: string }) => m.name === "web-config");
  t.same(mount, { name: "web-config", mountPath: "/etc/proxyscope/web", readOnly: true });
  const vol = ds3.spec.template.spec.volumes.find((v: { name: string }) => v.name === "web-config");
  t.equal(vol.secret.secretName, "proxyscope-agent-web");
  t.same(
    vol.secret.items.map((i: { key: string }) => i.key).sort(),
    ["tls.crt", "tls.key", "web-config.yml"],
    "the pod gets the web config and its key pair, never the scrape password",
  );
  t.equal(c3.livenessProbe.httpGet.scheme, "HTTPS");
  t.equal(c3.readinessProbe.httpGet.scheme, "HTTPS");
  const sm3 = web.objects.find((o) => o.kind === "ServiceMonitor" && o.metadata.name === "proxyscope-agent")!;
  const ep3 = sm3.spec.endpoints[0];
  t.equal(ep3.scheme, "https");
  t.same(ep3.tlsConfig.ca.secret, { name: "proxyscope-agent-web", key: "ca.crt" });
  t.equal(ep3.tlsConfig.serverName, "proxyscope-agent", "one name for every node's agent");
  t.same(ep3.basicAuth, {
    username: { name: "proxyscope-agent-web", key: "username" },
    password: { name: "proxyscope-agent-web", key: "password" },
  });
  for (const o of [ds3, sm3]) t.equal(await validateAgainstSchema(o), null, `${id(o)} with web-config valid`);
  const diags = unknownFieldDiagnostics([ds3, sm3]);
  t.same(diags, ["", ""], "no unknown fields after the patches");
});

t.test("the agent has no API access", async (t) => {
  const sa = find("ServiceAccount", "proxyscope-agent", "proxyscope");
  t.equal(sa.automountServiceAccountToken, false, "ServiceAccount mounts no token");
  const ds = find("DaemonSet", "proxyscope-agent", "proxyscope");
  t.equal(ds.spec.template.spec.serviceAccountName, "proxyscope-agent");
  t.equal(ds.spec.template.spec.automountServiceAccountToken, false, "pod mounts no token");
  const bound = objs
    .filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")
    .flatMap((o) => o.subjects as { name: string }[]);
  t.notOk(
    bound.some((s) => s.name === "proxyscope-agent"),
    "no binding names the agent",
  );
});

t.test("the agent DaemonSet", async (t) => {
  const ds = find("DaemonSet", "proxyscope-agent", "proxyscope");
  const pod = ds.spec.template.spec;
  const [c, ...others] = pod.containers;
  t.equal(others.length, 0, "one container");
  t.equal(pod.hostNetwork, true, "host network");
  t.equal(pod.dnsPolicy, "ClusterFirstWithHostNet");
  t.notOk(pod.hostPID, "no host PID");
  t.notOk(pod.hostIPC, "no host IPC");
  t.equal(pod.shareProcessNamespace, true, "pause is PID 1 and reaps a killed tool's orphans");
  t.same(pod.tolerations, [{ operator: "Exists" }], "tolerates every taint: runs on every node");
  t.same(ds.spec.updateStrategy, { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } });
  t.not(pod.priorityClassName, "system-node-critical", "an observer is not node-critical");
  t.not(pod.priorityClassName, "system-cluster-critical");
  const pc = find("PriorityClass", pod.priorityClassName);
  t.equal(pc.preemptionPolicy, "Never", "never preempts a workload");
  t.ok(pc.value < 1_000_000_000, "below the system-reserved range");

  const sc = c.securityContext;
  t.same(sc.capabilities.drop, ["ALL"]);
  t.same([...sc.capabilities.add].sort(), ["NET_ADMIN", "NET_RAW"], "only the proven capabilities");
  t.equal(sc.readOnlyRootFilesystem, true);
  t.equal(sc.allowPrivilegeEscalation, false);
  t.equal(sc.privileged, false);

  t.same(c.args.slice(0, 1), ["serve"]);
  const arg = (flag: string) => c.args[c.args.indexOf(flag) + 1];
  t.equal(arg("--host-root"), "/host");
  t.equal(arg("--listen"), "0.0.0.0");
  t.equal(arg("--port"), "9977");
  t.equal(arg("--detail-from"), "any", "the in-cluster collector reads /report over the pod network");
  t.same(c.ports, [{ name: "metrics", containerPort: 9977, protocol: "TCP" }], "port matches --port");
  t.equal(c.livenessProbe.httpGet.path, "/healthz");
  t.equal(c.livenessProbe.httpGet.port, "metrics");
  t.equal(c.readinessProbe.httpGet.path, "/readyz");
  t.equal(c.readinessProbe.httpGet.port, "metrics");
  // The request is the steady state the benchmarks measured (117-145 MB serving, bench/results/rss-release.md
  // and ipvs-gate.md), so the scheduler places the agent where its memory is; the limit covers the peak.
  t.same(c.resources, { requests: { cpu: "20m", memory: "144Mi" }, limits: { memory: "320Mi" } });

  const env = Object.fromEntries(
    c.env.map((e: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }) => [
      e.name,
      e.valueFrom?.fieldRef?.fieldPath,
    ]),
  );
  t.equal(env.NODE_NAME, "spec.nodeName");
  t.equal(env.NODE_IPS, "status.hostIPs");

  const volumes = new Map<string, { hostPath?: { path: string; type?: string } }>(
    pod.volumes.map((v: { name: string }) => [v.name, v]),
  );
  const hostMounts = c.volumeMounts
    .map((m: { name: string; mountPath: string; readOnly?: boolean }) => ({
      ...m,
      host: volumes.get(m.name)?.hostPath,
    }))
    .filter((m: { host?: unknown }) => m.host !== undefined);
  const lock = hostMounts.filter((m: { host: { path: string } }) => m.host.path === "/run/xtables.lock");
  // Parity: the agent's own state directory, the one place it writes: the parity snapshot.
  const state = hostMounts.filter((m: { host: { path: string } }) => m.host.path === "/var/lib/proxyscope");
  t.equal(state.length, 1, "one state directory");
  t.same(state[0]?.host, { path: "/var/lib/proxyscope", type: "DirectoryOrCreate" });
  t.equal(state[0]?.mountPath, "/var/lib/proxyscope");
  t.match(c.args.join(" "), /--parity-snapshot \/var\/lib\/proxyscope\/ipvs-snapshot\.json/);
  const probeMounts = hostMounts.filter(
    (m: { host: { path: string } }) =>
      m.host.path !== "/run/xtables.lock" && m.host.path !== "/var/lib/proxyscope",
  );
  t.same(
    probeMounts.map((m: { host: { path: string } }) => m.host.path).sort(),
    ["/etc/os-release", "/lib/modules", "/usr/lib/os-release", "/var/lib/dpkg/status"],
    "exactly the host paths the probes read, plus the xtables lock",
  );
  // cleanup --apply shares kube-proxy's iptables lock: the same mount as kube-proxy's own DaemonSet
  // (test/fixtures/kubernetes/kube-proxy-daemonset.kubeadm.json, kubeadm's KubeProxyDaemonSet19).
  const kubeadm = JSON.parse(
    readFileSync(join(ROOT, "test/fixtures/kubernetes/kube-proxy-daemonset.kubeadm.json"), "utf8"),
  ) as K8sObject;
  const kpPod = kubeadm.spec.template.spec;
  const kpVolume = kpPod.volumes.find((v: { name: string }) => v.name === "xtables-lock");
  const kpMount = kpPod.containers[0].volumeMounts.find((m: { name: string }) => m.name === "xtables-lock");
  t.equal(lock.length, 1, "one xtables lock mount");
  t.same(lock[0]?.host, kpVolume.hostPath, "hostPath and type as kube-proxy's (FileOrCreate)");
  t.equal(lock[0]?.mountPath, kpMount.mountPath, "at the path iptables locks (/run/xtables.lock)");
  t.not(lock[0]?.readOnly, true, "read-write, as kube-proxy mounts it");
  for (const m of probeMounts) {
    t.equal(m.readOnly, true, `${m.host.path} read-only`);
    t.equal(m.mountPath, `/host${m.host.path}`, `${m.host.path} under --host-root`);
    t.ok(
      ["File", "Directory"].includes(m.host.type),
      `${m.host.path} type ${m.host.type}: never created on the node`,
    );
  }
});

t.test("the agents' headless Service and the ServiceMonitor find the agent pods", async (t) => {
  const ds = find("DaemonSet", "proxyscope-agent", "proxyscope");
  const svc = find("Service", "proxyscope-agent", "proxyscope");
  t.equal(svc.spec.clusterIP, "None", "headless");
  t.same(svc.spec.ports, [{ name: "metrics", port: 9977, targetPort: "metrics", protocol: "TCP" }]);
  const podLabels = ds.spec.template.metadata.labels;
  for (const [k, v] of Object.entries(svc.spec.selector)) t.equal(podLabels[k], v, `pod has ${k}=${v}`);
  const sm = find("ServiceMonitor", "proxyscope-agent", "proxyscope");
  for (const [k, v] of Object.entries(sm.spec.selector.matchLabels))
    t.equal(svc.metadata.labels?.[k], v, `Service has ${k}`);
  t.same(sm.spec.namespaceSelector.matchNames, ["proxyscope"]);
  const [ep] = sm.spec.endpoints;
  t.equal(ep.port, "metrics");
  t.match(ep.relabelings, [{ sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node" }]);
  t.notOk(sm.spec.jobLabel, "job label = Service name (the rules' up{job=...} relies on it)");
});

t.test("a ServiceMonitor scrapes the collector's fleet gauges", async (t) => {
  const svc = find("Service", "proxyscope-collector", "proxyscope");
  const sm = find("ServiceMonitor", "proxyscope-collector", "proxyscope");
  for (const [k, v] of Object.entries(sm.spec.selector.matchLabels))
    t.equal(svc.metadata.labels?.[k], v, `collector Service has ${k}=${v}`);
  const agentSvc = find("Service", "proxyscope-agent", "proxyscope");
  t.notOk(
    Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => agentSvc.metadata.labels?.[k] === v),
    "does not also select the agents' Service",
  );
  t.same(sm.spec.namespaceSelector.matchNames, ["proxyscope"]);
  const [ep, ...more] = sm.spec.endpoints;
  t.equal(more.length, 0, "one endpoint");
  t.equal(ep.port, svc.spec.ports[0].name, "the Service's port, by name");
  t.equal(ep.path, "/metrics");
});

t.test("the collector: non-root, read-only, nothing but reads", async (t) => {
  const dep = find("Deployment", "proxyscope-collector", "proxyscope");
  const pod = dep.spec.template.spec;
  const [c] = pod.containers;
  t.same(c.command, ["proxyscope"]);
  t.equal(c.args[0], "serve");
  t.equal(pod.securityContext.runAsNonRoot, true);
  t.ok(pod.securityContext.runAsUser > 0);
  t.equal(c.securityContext.readOnlyRootFilesystem, true);
  t.equal(c.securityContext.allowPrivilegeEscalation, false);
  t.same(c.securityContext.capabilities, { drop: ["ALL"] });
  t.notOk(pod.hostNetwork, "pod network");
  const svc = find("Service", "proxyscope-collector", "proxyscope");
  t.equal(svc.spec.ports[0].port, 8080);
  t.same(
    c.ports.find((p: { name: string }) => p.name === svc.spec.ports[0].targetPort),
    { name: "http", containerPort: 8080, protocol: "TCP" },
  );

  type Rule = {
    apiGroups?: string[];
    resources?: string[];
    resourceNames?: string[];
    verbs: string[];
    nonResourceURLs?: string[];
  };
  const granted: { ns: string; rule: Rule }[] = [];
  for (const b of objs.filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")) {
    if (
      !(b.subjects as { name: string; namespace: string }[]).some(
        (s) => s.name === "proxyscope-collector" && s.namespace === "proxyscope",
      )
    )
      continue;
    const role = find(
      b.roleRef.kind,
      b.roleRef.name,
      b.roleRef.kind === "Role" ? b.metadata.namespace : undefined,
    );
    for (const rule of role.rules as Rule[])
      granted.push({ ns: b.kind === "RoleBinding" ? b.metadata.namespace! : "*", rule });
  }
  const flat = granted
    .flatMap(({ ns, rule }) =>
      (rule.resources ?? rule.nonResourceURLs ?? []).map(
        (r) =>
          `${ns} ${(rule.apiGroups ?? [""])[0] || "core"}/${r} [${[...rule.verbs].sort()}]${rule.resourceNames ? ` names=${[...rule.resourceNames].sort()}` : ""}`,
      ),
    )
    .sort();
  t.same(flat, [
    "* apps/daemonsets [list]",
    "* core//version [get]",
    "* core/nodes [get,list,watch]",
    "* core/services [get,list,watch]",
    "* discovery.k8s.io/endpointslices [get,list]",
    "kube-system apps/daemonsets [get] names=kube-proxy",
    "kube-system core/configmaps [get] names=kube-proxy,kube-proxy-config,kubeadm-config",
    "kube-system core/pods [list]",
    "proxyscope core/pods [get,list,watch]",
  ]);
});

t.test("the laptop ClusterRole: agent pods and pods/proxy, read only, bound by the user", async (t) => {
  const role = find("ClusterRole", "proxyscope-laptop");
  t.same(role.rules, [
    { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
    { apiGroups: [""], resources: ["pods/proxy"], verbs: ["get"] },
  ]);
  t.notOk(
    objs.some(
      (o) =>
        (o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding") &&
        o.roleRef.name === "proxyscope-laptop",
    ),
    "no binding shipped: a user binds it in the agents' namespace",
  );
  t.equal(await validateAgainstSchema(role), null);
});
