/**
 * Large inputs for the expression and analysis utilities: structure.restructure, schema.compute,
 * generate.filter, analysis.aggregate and analysis.summarize, each run() on ~SIZE_MB and ~2×SIZE_MB
 * of JSON records, to show the time grows linearly (a ratio near 2). Config compiled per run, as
 * per request in the engine. Best of RUNS runs.
 *
 * Run: bun bench/experiments/expressions-large.ts   (SIZE_MB=10, RUNS=3 by default; ONLY=summarize runs the cases whose label holds it)
 */
import type { TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import aggregate from "../../src/utilities/analysis/aggregate";
import summarize from "../../src/utilities/analysis/summarize";
import filter from "../../src/utilities/generate/filter";
import compute from "../../src/utilities/schema/compute";
import restructure from "../../src/utilities/structure/restructure";
import type { Utility } from "../../src/utilities/types";
import { bestOf } from "../lib/best-of";
import { fillRecords } from "../lib/data";

const sizeMb = Number(process.env.SIZE_MB ?? 10);
const runs = Number(process.env.RUNS ?? 3);
const only = process.env.ONLY ?? "";

const records = (bytes: number): Record<string, unknown>[] =>
  fillRecords(bytes, (id) => ({
    id,
    firstName: `Name${id % 997}`,
    lastName: `Family${id % 113}`,
    age: id % 90,
    status: id % 3 === 0 ? "active" : "idle",
    price: (id % 500) / 4,
    quantity: id % 12,
    address: { city: `City${id % 50}`, country: id % 2 ? "CH" : "US" },
    tags: ["a", `t${id % 7}`],
  }));

const cases: Array<[string, Utility<TObject>, Record<string, unknown>]> = [
  [
    "structure.restructure",
    restructure,
    { template: { name: "{{firstName}} {{lastName}}", city: "address.city", adult: "{{ age >= 18 }}", v: { $value: 1 } } },
  ],
  [
    "schema.compute",
    compute,
    {
      fields: [
        { target: "fullName", expression: "{{firstName}} {{lastName}}" },
        { target: "total", expression: "{{price * quantity}}" },
      ],
    },
  ],
  ["generate.filter condition", filter, { condition: 'age >= 18 && status == "active" && contains(tags, "t3")' }],
  [
    "generate.filter where",
    filter,
    {
      where: [
        { field: "age", op: "gte", value: 18 },
        { field: "address.city", op: "regex", value: "^City1" },
      ],
    },
  ],
  [
    "analysis.aggregate",
    aggregate,
    {
      groupBy: ["address.country", "status"],
      aggregations: [
        { op: "count" },
        { op: "sum", field: "price" },
        { op: "avg", field: "age" },
        { op: "median", field: "quantity" },
        { op: "countDistinct", field: "address.city" },
      ],
    },
  ],
  ["analysis.summarize", summarize, {}],
];

// one untimed run on a small input first, so that the first timed case does not pay for the JIT
for (const [, utility, config] of cases)
  utility.run({ primary: records(1024 * 1024) }, Value.Default(utility.configSchema, structuredClone(config)) as never);

console.log(`best of ${runs} runs; input size is the JSON text of the records`);
for (const [label, utility, config] of cases.filter(([label]) => label.includes(only))) {
  const times: string[] = [];
  let previous = 0;
  for (const factor of [1, 2]) {
    const primary = records(sizeMb * factor * 1024 * 1024);
    const megabytes = JSON.stringify(primary).length / 1024 / 1024;
    const ms = bestOf(runs, () => utility.run({ primary }, Value.Default(utility.configSchema, structuredClone(config)) as never));
    times.push(`${megabytes.toFixed(1)} MB ${ms.toFixed(0).padStart(5)} ms`);
    if (factor === 2) times.push(`ratio ${(ms / previous).toFixed(2)}`);
    previous = ms;
  }
  console.log(`${label.padEnd(28)} ${times.join("   ")}`);
}
