import type { NodeView } from "../view/build.js";

/** How to find out what runs on a node whose kube-proxy did not say its mode. */
export const HOW_TO_CONFIRM =
  "kube-proxy did not answer /proxyMode, so the phase is a guess from kernel state. Look for a kube-proxy pod on this node (kubectl -n kube-system get pods -o wide --field-selector spec.nodeName=<node>) and ask it (curl -s http://127.0.0.1:10249/proxyMode on the node), and check whether a CNI such as Cilium or Calico eBPF, or kube-router's service proxy (--run-service-proxy), now implements Services here";

/**
 * A remedy that deletes kernel state, as the thing to do only when kube-proxy itself said its mode. On a
 * guessed phase it first says how to confirm what runs there, then gives the deletion on a condition:
 * deleting live IPVS state or a table kube-proxy still programs would cut every Service on the node.
 */
export function deletion(
  view: Pick<NodeView, "runningMode" | "phase">,
  remedy: string,
  condition = "kube-proxy is gone from this node for good (as after a move to Cilium or Calico eBPF), not only silent",
): string {
  // A mode kube-proxy names but nobody knows (phase unknown) confirms nothing either.
  if (view.runningMode !== null && view.phase !== "unknown") return remedy;
  return `Confirm first what runs on this node: ${view.runningMode === null ? HOW_TO_CONFIRM : `kube-proxy answers /proxyMode with a mode proxyscope does not know (${view.runningMode}); ask kube-proxy's log what it runs`}. Only if ${condition}: ${remedy}. If kube-proxy runs but does not answer, fix that and scan again.`;
}
