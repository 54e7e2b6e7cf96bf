/**
 * Every utility whose output can outgrow its input charges what it builds to the run's budget as it
 * builds it: with a 1 MiB budget, inputs whose full output would be gigabytes stop at once with
 * ResultTooLargeError, and within the budget the output is what it always was.
 */
import { describe, expect, test } from "bun:test";
import { OutputBudget, ResultTooLargeError, unlimitedBudget } from "../../src/utilities/budget";
import { registry } from "../../src/utilities/registry";
import { validateConfig } from "../../src/modules/utilities/execution";

const MiB = 1024 * 1024;

/** Per amplifying utility: a small input whose unbounded output is far beyond 1 MiB. */
const EXPLOSIVE: Record<string, { primary: unknown; config: Record<string, unknown> }> = {
  "structure.copy-move": { primary: { x: 1 }, config: { operations: Array.from({ length: 40 }, (_, i) => ({ from: "", to: `a${i}` })) } },
  "generate.generate-mock-data": { primary: { rows: [[[[[[[[[[[[["{{ fullName }}"]]]]]]]]]]]]] }, config: { count: 10_000, seed: 1 } },
  "convert.csv-to-json": { primary: Array.from({ length: 2000 }, (_, i) => `a_long_column_name_${i}`).join(",") + "\n" + ",\n".repeat(50_000), config: { emptyAs: "string" } },
  "convert.json-to-csv": { primary: Array.from({ length: 20_000 }, (_, i) => ({ [`k${i}`]: 1 })), config: {} },
  "structure.find-replace": { primary: ["a".repeat(100_000)], config: { search: "a", replacement: "b".repeat(100_000) } },
  "cleanup.map-values": { primary: [{ list: Array.from({ length: 100_000 }, () => "Y") }], config: { mappings: { Y: "z".repeat(100_000) } } },
  "cleanup.redact": { primary: { text: "x".repeat(100_000) }, config: { patterns: [], customPatterns: ["x"], mask: "m".repeat(100_000) } },
  "schema.compute": { primary: [{ f0: [1, 2, 3, 4] }], config: { fields: Array.from({ length: 40 }, (_, i) => ({ target: `f${i + 1}`, expression: `{{ concat(f${i}, f${i}) }}` })) } },
  "structure.restructure": { primary: Array.from({ length: 1000 }, () => ({ text: "t".repeat(1000) })), config: { template: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`c${i}`, "$"])) } },
  "schema.normalize": { primary: Array.from({ length: 20_000 }, (_, i) => ({ [`key${i}`]: i })), config: {} },
  "convert.add-localization": {
    primary: Array.from({ length: 200 }, () => ({ text: "s".repeat(5000) })),
    config: { locales: ["en", "fr", "de", "es", "it", "nl", "pt", "sv", "da", "fi", "pl", "cs", "ja", "ko", "zh"], fill: "source" },
  },
  "structure.flatten-nest": {
    primary: (() => {
      let value: unknown = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`l${i}`, i]));
      for (let level = 0; level < 2000; level++) value = { [`level_${level}`]: value };
      return value;
    })(),
    config: {},
  },
};

describe("amplifying utilities stop at their budget", () => {
  test("every utility marked amplifies has a case here, and every case is marked", () => {
    const marked = registry.utilities.filter((utility) => utility.amplifies).map((utility) => utility.id).sort();
    expect(marked).toEqual(Object.keys(EXPLOSIVE).sort());
  });

  test.each(Object.keys(EXPLOSIVE))("%s: a 1 MiB budget stops an output of gigabytes with ResultTooLargeError", (id) => {
    const utility = registry.find(id)!;
    const { primary, config } = EXPLOSIVE[id];
    const budget = new OutputBudget(MiB);
    expect(() => utility.run({ primary }, validateConfig(utility, config) as never, budget)).toThrow(ResultTooLargeError);
  });

  test("within the budget the output is the unbudgeted one", () => {
    for (const id of ["structure.copy-move", "structure.find-replace", "convert.csv-to-json"]) {
      const utility = registry.find(id)!;
      const config = validateConfig(utility, id === "structure.find-replace" ? { search: "a", replacement: "bb" } : id === "convert.csv-to-json" ? {} : { operations: [{ from: "", to: "copy" }] }) as never;
      const primary = id === "convert.csv-to-json" ? "a,b\n1,2\n" : { a: "banana" };
      expect(JSON.stringify(utility.run({ primary }, config, new OutputBudget(MiB)))).toBe(JSON.stringify(utility.run({ primary }, config, unlimitedBudget())));
    }
  });
});
