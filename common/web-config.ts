import { X509Certificate, createPrivateKey } from "node:crypto";
import { dirname, resolve } from "node:path";
import { createSecureContext } from "node:tls";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { readRegularBytes } from "./regular-file.js";

// The Prometheus exporter-toolkit web configuration (`--web.config.file`, the file node_exporter reads),
// as documented in prometheus/exporter-toolkit docs/web-configuration.md. Unknown keys are errors, as in
// the toolkit (it unmarshals strictly). Settings the toolkit has and proxyscope does not implement are
// refused by name rather than ignored: a security setting silently dropped is worse than a failed start.

const CLIENT_AUTH_TYPES = [
  "NoClientCert",
  "RequestClientCert",
  "RequireAnyClientCert",
  "VerifyClientCertIfGiven",
  "RequireAndVerifyClientCert",
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

const TLS_VERSIONS = { TLS10: "TLSv1", TLS11: "TLSv1.1", TLS12: "TLSv1.2", TLS13: "TLSv1.3" } as const;
type TlsVersionName = keyof typeof TLS_VERSIONS;
const TlsVersion = z.enum(Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]]);

// bcrypt in its modular crypt form ($2a$/$2b$/$2y$, cost, 22 characters of salt, 31 of hash).
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

const notSupported = (why: string) =>
  z.unknown().refine(() => false, { message: `not supported by proxyscope (${why}); remove it` });

const TlsServerConfig = z
  .strictObject({
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    client_ca: z.string().min(1).optional(),
    cert_file: z.string().min(1).optional(),
    key_file: z.string().min(1).optional(),
    client_ca_file: z.string().min(1).optional(),
    client_auth_type: z.enum(CLIENT_AUTH_TYPES).default("NoClientCert"),
    min_version: TlsVersion.default("TLS12"),
    max_version: TlsVersion.default("TLS13"),
    prefer_server_cipher_suites: z.boolean().default(true),
    client_allowed_sans: notSupported("no SAN allow-list yet").optional(),
    cipher_suites: notSupported("Go cipher names; Node uses OpenSSL's").optional(),
    curve_preferences: notSupported("Go curve names; Node uses OpenSSL's").optional(),
  })
  .superRefine((c, ctx) => {
    const pair = (inline: unknown, file: unknown, name: string, required: boolean) => {
      if (inline !== undefined && file !== undefined)
        ctx.addIssue({ code: "custom", message: `give ${name} or ${name}_file, not both` });
      else if (required && inline === undefined && file === undefined)
        ctx.addIssue({ code: "custom", message: `${name}_file (or ${name}) is required for TLS` });
    };
    pair(c.cert, c.cert_file, "cert", true);
    pair(c.key, c.key_file, "key", true);
    pair(c.client_ca, c.client_ca_file, "client_ca", false);
    const hasCa = c.client_ca !== undefined || c.client_ca_file !== undefined;
    const verifies =
      c.client_auth_type === "RequireAndVerifyClientCert" || c.client_auth_type === "VerifyClientCertIfGiven";
    if (verifies && !hasCa)
      ctx.addIssue({
        code: "custom",
        message: `client_auth_type ${c.client_auth_type} needs client_ca_file`,
      });
    if (hasCa && !verifies)
      ctx.addIssue({
        code: "custom",
        message: "client CAs are configured but client_auth_type does not verify client certificates",
      });
    if (Object.keys(TLS_VERSIONS).indexOf(c.min_version) > Object.keys(TLS_VERSIONS).indexOf(c.max_version))
      ctx.addIssue({ code: "custom", message: "min_version is above max_version" });
  });

const HttpServerConfig = z.strictObject({
  // HTTP/2 is an offer the toolkit makes over TLS; proxyscope speaks HTTP/1.1, which every scraper accepts.
  http2: z.boolean().optional(),
  headers: z
    .strictObject({
      "Content-Security-Policy": z.string().optional(),
      "X-Frame-Options": z
        .string()
        .refine((v) => /^(deny|sameorigin)$/i.test(v), "X-Frame-Options: deny or sameorigin")
        .optional(),
      "X-Content-Type-Options": z
        .string()
        .refine((v) => /^nosniff$/i.test(v), "X-Content-Type-Options: nosniff")
        .optional(),
      "X-XSS-Protection": z.string().optional(),
      "Strict-Transport-Security": z.string().optional(),
    })
    .optional(),
});

export const WebConfigFile = z
  .strictObject({
    tls_server_config: TlsServerConfig.optional(),
    http_server_config: HttpServerConfig.optional(),
    basic_auth_users: z
      .record(
        z
          .string()
          .min(1)
          .refine((u) => !u.includes(":"), "a basic auth user name cannot hold ':'"),
        z.string().regex(BCRYPT, "a bcrypt hash ($2y$10$...)"),
      )
      .optional(),
    rate_limit: notSupported("no rate limiter on the whole port").optional(),
  })
  .nullable()
  .transform((c) => c ?? {});
export type WebConfigFile = z.infer<typeof WebConfigFile>;

/** What the server needs: TLS material read from disk, the users, the extra headers. */
export interface WebSecurity {
  source: string;
  tls: {
    key: Buffer;
    cert: Buffer;
    ca: Buffer | undefined;
    clientAuth: ClientAuthType;
    minVersion: (typeof TLS_VERSIONS)[TlsVersionName];
    maxVersion: (typeof TLS_VERSIONS)[TlsVersionName];
    honorCipherOrder: boolean;
  } | null;
  /** User name -> bcrypt hash; empty: no basic auth. */
  users: ReadonlyMap<string, string>;
  headers: Readonly<Record<string, string>>;
  /** Risks the config leaves open (plain HTTP, passwords in clear text), for the log at start. */
  warnings: readonly string[];
}

export class WebConfigError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`web config ${file}: ${message}`);
  }
}

/** Pure: the file's text to its validated settings, or the first problems by path. */
export function parseWebConfig(text: string, file: string): WebConfigFile {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 10 });
  } catch (e) {
    throw new WebConfigError(file, `not YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  const r = WebConfigFile.safeParse(doc === undefined ? null : doc);
  if (!r.success) {
    const problems = r.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length > 0 ? `${i.path.join(".")}: ` : ""}${i.message}`);
    throw new WebConfigError(file, problems.join("; "));
  }
  refuseEmpty(r.data, file);
  return r.data;
}

const headersOf = (cfg: WebConfigFile): Record<string, string> =>
  Object.fromEntries(
    Object.entries(cfg.http_server_config?.headers ?? {}).filter(
      (e): e is [string, string] => e[1] !== undefined && e[1] !== "",
    ),
  );

// The toolkit serves plain HTTP when the file configures nothing, and no basic auth for an empty
// basic_auth_users (exporter-toolkit web/tls_config.go Serve, web/handler.go ServeHTTP). A file given
// to protect the port that protects nothing is a mistake (a template that rendered nothing, a Secret's
// empty key): refused by name here rather than served open.
function refuseEmpty(cfg: WebConfigFile, file: string): void {
  if (cfg.basic_auth_users !== undefined && Object.keys(cfg.basic_auth_users).length === 0)
    throw new WebConfigError(
      file,
      "basic_auth_users is empty: nobody could log in, and the server would serve without authentication; list users or remove the key",
    );
  if (
    cfg.tls_server_config === undefined &&
    cfg.basic_auth_users === undefined &&
    Object.keys(headersOf(cfg)).length === 0
  )
    throw new WebConfigError(
      file,
      "configures nothing (no tls_server_config, no basic_auth_users, no headers): the server would serve plain HTTP without authentication as if no file were given; configure TLS or users, or drop --web.config.file",
    );
}

const MAX_FILE_BYTES = 1024 * 1024;

// Through the one capped regular-file reader: /dev/zero or a FIFO named as the config or a certificate
// must neither fill memory nor hang the start. Symlinks are followed: Kubernetes mounts Secrets as them.
async function readBounded(path: string, file: string, what: string): Promise<Buffer> {
  const r = await readRegularBytes(path, MAX_FILE_BYTES);
  if (!r.ok) throw new WebConfigError(file, `${what} ${path}: ${r.error}`);
  return r.bytes;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Certificates in a PEM bundle, or why not: OpenSSL skips text it cannot read in a CA list silently. */
function pemCertificates(pem: Buffer): string | null {
  const blocks = pem.toString("utf8").match(PEM_CERT) ?? [];
  if (blocks.length === 0) return "not a PEM certificate (no BEGIN CERTIFICATE block)";
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch (e) {
      return `not a PEM certificate (${(e as Error).message})`;
    }
  }
  return null;
}

// The toolkit loads the pair with tls.X509KeyPair before serving (web/tls_config.go ConfigToTLSConfig),
// so a wrong key is a config error there; here it was an exception from the server's construction.
function checkTls(
  t: NonNullable<WebSecurity["tls"]>,
  names: Record<"cert" | "key" | "ca", string>,
): string | null {
  const certProblem = pemCertificates(t.cert);
  if (certProblem !== null) return `${names.cert}: ${certProblem}`;
  try {
    createPrivateKey(t.key);
  } catch (e) {
    return `${names.key}: not a PEM private key (${(e as Error).message}; encrypted keys are not supported)`;
  }
  if (t.ca !== undefined) {
    const caProblem = pemCertificates(t.ca);
    if (caProblem !== null) return `${names.ca}: ${caProblem}`;
  }
  try {
    createSecureContext({ key: t.key, cert: t.cert });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ERR_OSSL_X509_KEY_VALUES_MISMATCH"
      ? `${names.key} is not the key of ${names.cert} (the private key does not match the certificate's public key)`
      : `${names.cert} and ${names.key}: ${(e as Error).message}`;
  }
  return null;
}

function warningsOf(tls: WebSecurity["tls"], users: ReadonlyMap<string, string>): string[] {
  if (tls !== null) return [];
  if (users.size > 0)
    return [
      "basic auth over plain HTTP: passwords cross the network in clear text (base64) to anyone on the path; add tls_server_config",
    ];
  return [
    "no TLS and no authentication: plain HTTP, the metrics open to any client and the detail routes to loopback (or --detail-from any)",
  ];
}

/** Reads the web config and the files it names (relative to the config file's directory, as the toolkit does). */
export async function loadWebConfig(file: string): Promise<WebSecurity> {
  const cfg = parseWebConfig((await readBounded(file, file, "read")).toString("utf8"), file);
  const base = dirname(resolve(file));
  const material = async (inline: string | undefined, path: string | undefined, what: string) =>
    inline !== undefined
      ? Buffer.from(inline)
      : path !== undefined
        ? readBounded(resolve(base, path), file, what)
        : undefined;
  const t = cfg.tls_server_config;
  let tls: WebSecurity["tls"] = null;
  if (t !== undefined) {
    tls = {
      cert: (await material(t.cert, t.cert_file, "cert_file"))!,
      key: (await material(t.key, t.key_file, "key_file"))!,
      ca: await material(t.client_ca, t.client_ca_file, "client_ca_file"),
      clientAuth: t.client_auth_type,
      minVersion: TLS_VERSIONS[t.min_version],
      maxVersion: TLS_VERSIONS[t.max_version],
      honorCipherOrder: t.prefer_server_cipher_suites,
    };
    const name = (inline: string | undefined, path: string | undefined, field: string) =>
      inline !== undefined ? `${field} (inline)` : `${field}_file ${path}`;
    const problem = checkTls(tls, {
      cert: name(t.cert, t.cert_file, "cert"),
      key: name(t.key, t.key_file, "key"),
      ca: name(t.client_ca, t.client_ca_file, "client_ca"),
    });
    if (problem !== null) throw new WebConfigError(file, problem);
  }
  const users = new Map(Object.entries(cfg.basic_auth_users ?? {}));
  return { source: file, tls, users, headers: headersOf(cfg), warnings: warningsOf(tls, users) };
}
