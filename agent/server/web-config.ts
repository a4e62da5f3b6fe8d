import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

// The Prometheus exporter-toolkit web configuration (`--web.config.file`, the file node_exporter reads),
// as documented in prometheus/exporter-toolkit docs/web-configuration.md. Unknown keys are errors, as in
// the toolkit (it unmarshals strictly). Settings the toolkit has and this agent does not implement are
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
  z.unknown().refine(() => false, { message: `not supported by proxyscope-agent (${why}); remove it` });

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
  // HTTP/2 is an offer the toolkit makes over TLS; this agent speaks HTTP/1.1, which every scraper accepts.
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
  return r.data;
}

const MAX_FILE_BYTES = 1024 * 1024;

async function readBounded(path: string, file: string, what: string): Promise<Buffer> {
  let b: Buffer;
  try {
    b = await readFile(path);
  } catch (e) {
    throw new WebConfigError(
      file,
      `${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (b.length > MAX_FILE_BYTES) throw new WebConfigError(file, `${what} ${path} is larger than 1 MiB`);
  return b;
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
  }
  const headers = Object.fromEntries(
    Object.entries(cfg.http_server_config?.headers ?? {}).filter(
      (e): e is [string, string] => e[1] !== undefined && e[1] !== "",
    ),
  );
  return { source: file, tls, users: new Map(Object.entries(cfg.basic_auth_users ?? {})), headers };
}
