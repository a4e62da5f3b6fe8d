// The `--target-version` flag and what its rule (collector/rules/any/cluster-target-version.ts) reads.

/** `--target-version 1.40`: the release the cluster is going to, as Kubernetes 1.<minor>. */
export interface TargetVersion {
  text: string;
  minor: number;
}

export function parseTargetVersion(s: string): TargetVersion | null {
  const m = /^v?1\.(\d{1,3})(\.\d{1,4})?$/.exec(s);
  return m ? { text: `1.${Number(m[1])}`, minor: Number(m[1]) } : null;
}

export interface TargetNode {
  node: string;
  /** null: the node did not answer; what it runs is unknown. */
  phase: string | null;
}
