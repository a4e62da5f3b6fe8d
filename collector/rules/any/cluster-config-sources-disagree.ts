import { rule } from "../rule.js";

/**
 * The DaemonSet's --proxy-mode against the ConfigMap's mode. Beside --config kube-proxy ignores the flag
 * (Complete() replaces the flag-built config by the file's, keeping only the logging flags: kubernetes
 * v1.34.4 cmd/kube-proxy/app/options.go), so the ConfigMap's mode runs and the flag misleads; without
 * --config the flag runs and a ConfigMap saying otherwise misleads.
 */
export const configSourcesDisagree = rule({
  findings: { "cluster-config-sources-disagree": { severity: "error", stage: "any" } },
  needs: ["kubeProxyDaemonSet", "kubeProxyConfigMap"],
  evaluate({ facts }) {
    const ds = facts.kubeProxyDaemonSet;
    const cmMode = facts.kubeProxyConfigMap?.config?.mode?.trim() || null;
    if (!ds?.proxyModeFlag || !cmMode || ds.proxyModeFlag === cmMode) return [];
    const withConfig = ds.configFlag !== null;
    return [
      {
        id: "cluster-config-sources-disagree",
        severity: "error",
        stage: "any",
        blocksMigration: false,
        title: withConfig
          ? `kube-proxy ignores --proxy-mode=${ds.proxyModeFlag} beside --config: it runs the ConfigMap's mode: ${cmMode}`
          : `The DaemonSet's --proxy-mode=${ds.proxyModeFlag} is what runs (no --config); the ConfigMap says mode: ${cmMode}`,
        evidence: { proxyModeFlag: ds.proxyModeFlag, configMapMode: cmMode, configFlag: ds.configFlag },
        remedy: withConfig
          ? "Keep one source of truth: drop --proxy-mode from the DaemonSet (kube-proxy ignores it while --config is given) and change mode: in the ConfigMap"
          : "Keep one source of truth: pin the mode where kube-proxy reads it (--proxy-mode here, or mount the ConfigMap with --config and drop the flag), and make the ConfigMap agree or remove its mode:",
      },
    ];
  },
});
