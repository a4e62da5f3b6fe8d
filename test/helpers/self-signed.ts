// A self-signed certificate for a test's TLS server, made by openssl (node:crypto cannot issue X.509).
import { spawnSync } from "node:child_process";
import { join } from "node:path";

/** Writes `<name>.crt` and `<name>.key` (EC P-256, PEM, CN=<name>) into `dir`; throws with openssl's words. */
export function selfSigned(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const r = spawnSync(
    "/usr/bin/openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
    ]),
    { encoding: "utf8", timeout: 60_000 },
  );
  if (r.status !== 0) throw new Error(`openssl: ${r.error?.message ?? r.stderr}`);
  return { cert, key };
}
