import { rule } from "../rule.js";

/** The DaemonSet's --proxy-mode against the ConfigMap's mode: (flags win, so the ConfigMap misleads). */
export const configSourcesDisagree = rule({
  findings: { "cluster-config-sources-disagree": { severity: "error", stage: "any" } },
  needs: ["kubeProxyDaemonSet", "kubeProxyConfigMap"],
  evaluate({ facts }) {
    const ds = facts.kubeProxyDaemonSet;
    const cmMode = facts.kubeProxyConfigMap?.config?.mode?.trim() || null;
    if (!ds?.proxyModeFlag || !cmMode || ds.proxyModeFlag === cmMode) return [];
    return [
      {
        id: "cluster-config-sources-disagree",
        severity: "error",
        stage: "any",
        blocksMigration: false,
        title: `The DaemonSet says --proxy-mode=${ds.proxyModeFlag} but the ConfigMap says mode: ${cmMode}`,
        evidence: { proxyModeFlag: ds.proxyModeFlag, configMapMode: cmMode, configFlag: ds.configFlag },
        remedy:
          "Keep one source of truth: drop --proxy-mode from the DaemonSet and pin mode: in the ConfigMap",
      },
    ];
  },
});
