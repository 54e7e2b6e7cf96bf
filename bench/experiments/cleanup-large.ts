/**
 * Large inputs for analysis.diff, cleanup.redact, cleanup.map-values, cleanup.format-values (each
 * run() on ~SIZE_MB and ~2×SIZE_MB of JSON records, to show the time grows linearly: a ratio near 2)
 * and generate.generate-mock-data (5,000 and 10,000 records, the most a request may ask for).
 * Config filled from the schema per run, as per request in the engine. Best of RUNS runs.
 *
 * Run: bun bench/experiments/cleanup-large.ts   (SIZE_MB=10, RUNS=3 by default; ONLY=redact runs the cases whose label holds it)
 */
import type { TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import diff from "../../src/utilities/analysis/diff";
import formatValues from "../../src/utilities/cleanup/format-values";
import mapValues from "../../src/utilities/cleanup/map-values";
import redact from "../../src/utilities/cleanup/redact";
import generateMockData from "../../src/utilities/generate/generate-mock-data";
import type { Utility, UtilityInputs } from "../../src/utilities/types";
import { bestOf } from "../lib/best-of";

const sizeMb = Number(process.env.SIZE_MB ?? 10);
const runs = Number(process.env.RUNS ?? 3);
const only = process.env.ONLY ?? "";

function record(id: number): Record<string, unknown> {
  return {
    id,
    name: ` person number ${id % 997} `,
    status: ["Y", "N", "?"][id % 3],
    note: `write to user${id}@example.com or call +1 (555) ${String(100 + (id % 900))}-${String(1000 + (id % 9000))} about order ${id}`,
    price: (id % 5000) / 7,
    created: new Date(Date.UTC(2024, 0, 1) + id * 60_000).toISOString(),
    active: id % 2 === 0,
    address: { city: `City${id % 50}`, card: id % 10 === 0 ? "4111 1111 1111 1111" : "none" },
    tags: ["a", `t${id % 7}`],
  };
}

/** About `bytes` of JSON text: records are all about the size of the first. */
const records = (bytes: number) => Array.from({ length: Math.ceil(bytes / (JSON.stringify(record(0)).length + 1)) }, (_, id) => record(id));

/** About one member in ten changed, one in twenty removed, one in twenty added. */
function edited(old: Record<string, unknown>[]): Record<string, unknown>[] {
  return old.map((record, index) => {
    const copy: Record<string, unknown> = { ...record, address: { ...(record.address as object) } };
    if (index % 10 === 0) copy.price = (record.price as number) + 1;
    if (index % 20 === 0) delete copy.note;
    if (index % 20 === 5) copy.extra = index;
    return copy;
  });
}

const cases: Array<[string, Utility<TObject>, Record<string, unknown>, (primary: Record<string, unknown>[]) => UtilityInputs]> = [
  ["analysis.diff report", diff, {}, (old) => ({ primary: edited(old), secondary: old })],
  ["analysis.diff patch", diff, { mode: "patch" }, (old) => ({ primary: edited(old), secondary: old })],
  ["cleanup.redact defaults", redact, {}, (primary) => ({ primary })],
  [
    "cleanup.redact all, hash",
    redact,
    { patterns: ["email", "phone", "creditCard", "iban", "ipv4", "ipv6", "ssn", "url"], maskStyle: "hash", keys: ["city"] },
    (primary) => ({ primary }),
  ],
  ["cleanup.map-values", mapValues, { mappings: { Y: true, N: false }, paths: ["status"], unmatched: "null" }, (primary) => ({ primary })],
  [
    "cleanup.format-values",
    formatValues,
    {
      strings: { case: "title", collapseWhitespace: true },
      numbers: { decimals: 2 },
      dates: { format: "date", timeZone: "Europe/Paris" },
      booleans: { as: "yes-no" },
    },
    (primary) => ({ primary }),
  ],
];

console.log(`best of ${runs} runs; input size is the JSON text of primary`);
for (const [label, utility, config, inputsOf] of cases.filter(([label]) => label.includes(only))) {
  const times: string[] = [];
  let previous = 0;
  for (const factor of [1, 2]) {
    const inputs = inputsOf(records(sizeMb * factor * 1024 * 1024));
    const megabytes = JSON.stringify(inputs.primary).length / 1024 / 1024;
    const ms = bestOf(runs, () => utility.run(inputs, Value.Default(utility.configSchema, structuredClone(config)) as never));
    times.push(`${megabytes.toFixed(1)} MB ${ms.toFixed(0).padStart(5)} ms`);
    if (factor === 2) times.push(`ratio ${(ms / previous).toFixed(2)}`);
    previous = ms;
  }
  console.log(`${label.padEnd(28)} ${times.join("   ")}`);
}

if ("generate.generate-mock-data".includes(only) || only === "") {
  const shape = {
    id: "{{uuid}}",
    name: "{{fullName}}",
    email: "{{email}}",
    age: "{{integer(18, 90)}}",
    joined: "{{date(2020-01-01, 2024-12-31)}}",
    address: { street: "{{street}}", city: "{{city}}", zip: "{{zip}}" },
    bio: "A short example sentence about someone.",
    orders: [{ sku: "AB-1234", qty: 3, price: 19.99 }],
  };
  const times: string[] = [];
  for (const count of [5_000, 10_000]) {
    let bytes = 0;
    const ms = bestOf(runs, () => {
      bytes = JSON.stringify(
        generateMockData.run({ primary: shape }, Value.Default(generateMockData.configSchema, { count, seed: 1 }) as never),
      ).length;
    });
    times.push(`${count} records (${(bytes / 1024 / 1024).toFixed(1)} MB out) ${ms.toFixed(0).padStart(5)} ms`);
  }
  console.log(`${"generate.generate-mock-data".padEnd(28)} ${times.join("   ")}`);
}
