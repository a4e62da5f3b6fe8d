import { clip, excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// Prometheus text exposition format 0.0.4, as written by client_golang's expfmt and read by its
// TextParser (prometheus/common expfmt/text_parse.go): HELP/TYPE comments, label values with
// \\ \" \n escapes, Go float syntax (NaN, +Inf, -Inf), an optional integer millisecond timestamp.

type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  /** The sample's own name: a histogram's `_bucket`, `_sum` and `_count` keep their suffix. */
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs: number | null;
}

interface Family {
  name: string;
  type: MetricType;
  help: string | null;
  samples: Sample[];
}

export type Exposition = Map<string, Family>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

/** Parses a whole exposition. Any line that is not valid exposition makes the whole answer garbage. */
export function parsePrometheusText(text: string): Result<Exposition> {
  const families = new Map<string, MutableFamily>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.endsWith("\r") ? lines[i]!.slice(0, -1) : lines[i]!;
    if (line.trim() === "") continue;
    const err = line.startsWith("#") ? comment(line, families) : sampleLine(line, families);
    if (err !== null) return unparsable(`line ${i + 1}: ${err}: ${excerpt(line)}`);
  }
  const out: Exposition = new Map();
  for (const [k, f] of families) out.set(k, { name: f.name, type: f.type, help: f.help, samples: f.samples });
  return parsed(out);
}

function comment(line: string, families: Map<string, MutableFamily>): string | null {
  const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
  if (!m) return null; // any other comment is allowed and meaningless
  const [, keyword, name, rest = ""] = m;
  if (!METRIC_NAME.test(name!) || METRIC_NAME.exec(name!)![0] !== name) return "invalid metric name";
  const fam = familyFor(families, name!);
  if (keyword === "HELP") {
    if (fam.help !== null) return "second HELP line for metric";
    const help = unescape(rest, false);
    if (help === null) return "invalid escape in HELP";
    fam.help = help;
    return null;
  }
  const type = rest.trim();
  if (!TYPES.has(type)) return `unknown metric type ${excerpt(type)}`;
  if (fam.samples.length > 0 || fam.typed) return "TYPE line after samples or a second TYPE";
  fam.type = type as MetricType;
  fam.typed = true;
  return null;
}

function sampleLine(line: string, families: Map<string, MutableFamily>): string | null {
  const nm = METRIC_NAME.exec(line);
  if (!nm) return "no metric name";
  const name = nm[0];
  let pos = name.length;
  const labels: Record<string, string> = {};
  if (line[pos] === "{") {
    const r = readLabels(line, pos + 1, labels);
    if (typeof r === "string") return r;
    pos = r;
  }
  const rest = line.slice(pos);
  if (rest.length > 0 && rest[0] !== " " && rest[0] !== "\t") return "junk after metric name";
  const fields = rest.trim().split(/[ \t]+/);
  if (fields.length < 1 || fields[0] === "" || fields.length > 2)
    return "expected a value and an optional timestamp";
  const value = goFloat(fields[0]!);
  if (value === null) return "value is not a number";
  let timestampMs: number | null = null;
  if (fields.length === 2) {
    if (!/^-?\d+$/.test(fields[1]!)) return "timestamp is not an integer";
    timestampMs = Number(fields[1]);
  }
  const fam = familyFor(families, familyName(families, name));
  fam.samples.push({ name, labels, value, timestampMs });
  return null;
}

function readLabels(line: string, start: number, out: Record<string, string>): number | string {
  let pos = start;
  for (;;) {
    while (line[pos] === " " || line[pos] === "\t") pos++;
    if (line[pos] === "}") return pos + 1;
    const ln = LABEL_NAME.exec(line.slice(pos));
    if (!ln) return "invalid label name";
    pos += ln[0].length;
    while (line[pos] === " " || line[pos] === "\t") pos++;
    if (line[pos] !== "=") return "expected '=' after label name";
    pos++;
    while (line[pos] === " " || line[pos] === "\t") pos++;
    if (line[pos] !== '"') return "label value is not quoted";
    pos++;
    let raw = "";
    for (;;) {
      const c = line[pos];
      if (c === undefined) return "unterminated label value";
      if (c === "\\") {
        raw += c + (line[pos + 1] ?? "");
        pos += 2;
        continue;
      }
      if (c === '"') break;
      raw += c;
      pos++;
    }
    pos++;
    const value = unescape(raw, true);
    if (value === null) return "invalid escape in label value";
    if (Object.hasOwn(out, ln[0])) return `duplicate label ${clip(ln[0])}`;
    out[ln[0]] = value;
    while (line[pos] === " " || line[pos] === "\t") pos++;
    if (line[pos] === ",") {
      pos++;
      continue;
    }
    if (line[pos] === "}") return pos + 1;
    return "expected ',' or '}' in labels";
  }
}

/** HELP allows \\ and \n; label values also \". Anything else after a backslash is an error. */
function unescape(s: string, quotes: boolean): string | null {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== "\\") {
      out += c;
      continue;
    }
    const n = s[++i];
    if (n === "\\") out += "\\";
    else if (n === "n") out += "\n";
    else if (n === '"' && quotes) out += '"';
    else return null;
  }
  return out;
}

/** strconv.ParseFloat's accepted spellings that matter here: decimals, exponents, NaN, ±Inf. */
function goFloat(s: string): number | null {
  const lower = s.toLowerCase();
  if (lower === "nan") return NaN;
  if (lower === "+inf" || lower === "inf") return Infinity;
  if (lower === "-inf") return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
  return Number(s);
}

interface MutableFamily extends Family {
  typed: boolean;
}

function familyFor(families: Map<string, MutableFamily>, name: string): MutableFamily {
  let fam = families.get(name);
  if (!fam) {
    fam = { name, type: "untyped", help: null, samples: [], typed: false };
    families.set(name, fam);
  }
  return fam;
}

/** A histogram's _bucket/_sum/_count and a summary's _sum/_count belong to the family declared by TYPE. */
function familyName(families: Map<string, MutableFamily>, sample: string): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sample.endsWith(suffix)) continue;
    const base = families.get(sample.slice(0, -suffix.length));
    if (base?.type === "histogram" || (base?.type === "summary" && suffix !== "_bucket")) return base.name;
  }
  return sample;
}

interface FamilySum {
  type: MetricType;
  value: number;
  series: number;
  min: number;
  max: number;
}

/**
 * One number per name: counters and gauges summed over their series; a histogram or summary as
 * `<name>_count` and `<name>_sum` (buckets and quantiles do not add up to anything meaningful).
 */
export function sumFamilies(expo: Exposition): Map<string, FamilySum> {
  const out = new Map<string, FamilySum>();
  for (const fam of expo.values()) {
    if (fam.type === "histogram" || fam.type === "summary") {
      for (const suffix of ["_count", "_sum"]) {
        const samples = fam.samples.filter((s) => s.name === fam.name + suffix);
        if (samples.length > 0) out.set(fam.name + suffix, total(fam.type, samples));
      }
    } else if (fam.samples.length > 0) {
      out.set(fam.name, total(fam.type, fam.samples));
    }
  }
  return out;
}

function total(type: MetricType, samples: Sample[]): FamilySum {
  // Timestamps are per IP family from v1.33: their sum means nothing, their min and max do.
  const values = samples.map((s) => s.value);
  return {
    type,
    value: values.reduce((a, v) => a + v, 0),
    series: samples.length,
    min: Math.min(...values),
    max: Math.max(...values),
  };
}
