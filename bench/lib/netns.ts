// A network namespace on the host kernel holding kube-proxy's nftables-mode state at size N.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chunks, NFT_BASE, nftDeclarations, nftRulesAndElements, services } from "./gen.js";

function must(argv: readonly string[], input?: string): string {
  const r = spawnSync(argv[0]!, argv.slice(1), { input, encoding: "utf8", maxBuffer: 512 * 2 ** 20 });
  if (r.status !== 0)
    throw new Error(`${argv.join(" ")} exited ${r.status}: ${(r.stderr ?? "").slice(0, 500)}`);
  return r.stdout;
}

export class BenchNetns {
  constructor(readonly name: string) {}

  static create(name: string): BenchNetns {
    spawnSync("ip", ["netns", "delete", name]);
    must(["ip", "netns", "add", name]);
    must(["ip", "-n", name, "link", "set", "lo", "up"]);
    return new BenchNetns(name);
  }

  exec(argv: readonly string[], input?: string): string {
    return must(["ip", "netns", "exec", this.name, ...argv], input);
  }

  /**
   * kube-proxy's table at N Services x E endpoints, plus kubelet's iptables chains (nf_tables
   * backend). One `nft -f` for the whole ruleset takes minutes at N = 10,000: every object is
   * declared in one transaction, then rules and elements go in chunks of `chunk` Services.
   */
  loadNftablesMode(n: number, endpointsPer: number, repoRoot: string, chunk = 500): { ms: number } {
    const t0 = performance.now();
    const kubelet = readFileSync(`${repoRoot}/test/fixtures/netfilter/sources/kubelet.rules`, "utf8");
    this.exec(["iptables-nft-restore", "--noflush"], kubelet);
    const all = services(0, n, endpointsPer);
    this.exec(["nft", "-f", "-"], NFT_BASE + nftDeclarations(all));
    for (const [a, b] of chunks(n, chunk))
      this.exec(["nft", "-f", "-"], nftRulesAndElements(all.slice(a, b)));
    return { ms: performance.now() - t0 };
  }

  destroy(): void {
    spawnSync("ip", ["netns", "delete", this.name]);
  }
}
