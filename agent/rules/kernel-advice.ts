import type { OsReleaseFacts } from "../facts/host.js";

// What to do about a kernel below 5.13, by distribution: the fix is almost always a newer image.
export function kernelAdvice(os: OsReleaseFacts | null): string {
  const id = os?.id ?? "";
  const ver = os?.versionId ?? "";
  const ids = [id, ...(os?.idLike ?? [])];
  if (id === "ubuntu" && ver.startsWith("20.04")) {
    return "Ubuntu 20.04 on the GA 5.4 kernel: install the HWE kernel (apt install linux-generic-hwe-20.04, 5.15) and check nft >= 1.0.1 (20.04 ships 0.9.3), or rebuild the node image on Ubuntu 22.04/24.04; until then set mode: iptables";
  }
  if (id === "ubuntu" && ver.startsWith("18.04")) {
    return "Ubuntu 18.04 is end of life: rebuild the node image on Ubuntu 22.04/24.04; until then set mode: iptables";
  }
  if (ids.includes("rhel") || ids.includes("centos") || ids.includes("fedora")) {
    if (ver.startsWith("7") || ver.startsWith("8")) {
      return `${os?.prettyName ?? id} ships kernel 3.10/4.18: rebuild the node image on RHEL 9 or 10 (or a rebuild of them); until then set mode: iptables`;
    }
  }
  if (id === "debian" && (ver === "10" || ver === "11")) {
    return `Debian ${ver} ships kernel 4.19/5.10: rebuild the node image on Debian 12 or newer (or use the backports kernel); until then set mode: iptables`;
  }
  if (id === "amzn" && ver === "2") {
    return "Amazon Linux 2 (4.14/5.10 kernels): rebuild the node group on Amazon Linux 2023; until then set mode: iptables";
  }
  return "Rebuild the node image with a kernel 5.13 or newer (patching is rarely the answer: the image is end of life); until then set mode: iptables in the kube-proxy configuration — iptables mode is not deprecated";
}
