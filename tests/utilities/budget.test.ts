/**
 * Every utility whose output can outgrow its input charges what it builds to the run's budget as it
 * builds it: with a 1 MiB budget, inputs whose full output would be gigabytes stop at once with
 * ResultTooLargeError, and within the budget the output is what it always was.
 */
import { describe, expect, test } from "bun:test";
import { validateConfig } from "../../src/engine/execution";
import { OutputBudget, ResultTooLargeError, unlimitedBudget } from "../../src/utilities/budget";
import { registry } from "../../src/utilities/registry";

const MiB = 1024 * 1024;

/** `{ key: { key: … leaf } }`, `depth` levels */
function deepChain(depth: number, key: string, leaf: unknown): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = { [key]: value };
  return value;
}

/** The utility's run with its config validated as the engine does, on `budget`. */
function run(id: string, primary: unknown, config: Record<string, unknown>, budget: OutputBudget, secondary?: unknown): unknown {
  const utility = registry.find(id)!;
  return utility.run({ primary, secondary }, validateConfig(utility, config) as never, budget);
}

/** Per amplifying utility: a small input whose unbounded output is far beyond 1 MiB. */
const EXPLOSIVE: Record<string, { primary: unknown; config: Record<string, unknown> }> = {
  "structure.copy-move": { primary: { x: 1 }, config: { operations: Array.from({ length: 40 }, (_, i) => ({ from: "", to: `a${i}` })) } },
  "generate.generate-mock-data": { primary: { rows: [[[[[[[[[[[[["{{ fullName }}"]]]]]]]]]]]]] }, config: { count: 10_000, seed: 1 } },
  "convert.csv-to-json": {
    primary: Array.from({ length: 2000 }, (_, i) => `a_long_column_name_${i}`).join(",") + "\n" + ",\n".repeat(50_000),
    config: { emptyAs: "string" },
  },
  "convert.json-to-csv": { primary: Array.from({ length: 20_000 }, (_, i) => ({ [`k${i}`]: 1 })), config: {} },
  "structure.find-replace": { primary: ["a".repeat(100_000)], config: { search: "a", replacement: "b".repeat(100_000) } },
  "cleanup.map-values": {
    primary: [{ list: Array.from({ length: 100_000 }, () => "Y") }],
    config: { mappings: { Y: "z".repeat(100_000) } },
  },
  "cleanup.redact": { primary: { text: "x".repeat(100_000) }, config: { patterns: [], customPatterns: ["x"], mask: "m".repeat(100_000) } },
  "schema.compute": {
    primary: [{ f0: [1, 2, 3, 4] }],
    config: { fields: Array.from({ length: 40 }, (_, i) => ({ target: `f${i + 1}`, expression: `{{ concat(f${i}, f${i}) }}` })) },
  },
  "structure.restructure": {
    primary: Array.from({ length: 1000 }, () => ({ text: "t".repeat(1000) })),
    config: { template: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`c${i}`, "$"])) },
  },
  "schema.normalize": { primary: Array.from({ length: 20_000 }, (_, i) => ({ [`key${i}`]: i })), config: {} },
  "convert.add-localization": {
    primary: Array.from({ length: 200 }, () => ({ text: "s".repeat(5000) })),
    config: { locales: ["en", "fr", "de", "es", "it", "nl", "pt", "sv", "da", "fi", "pl", "cs", "ja", "ko", "zh"], fill: "source" },
  },
  "cleanup.format-values": { primary: Array.from({ length: 20_000 }, () => 1e300), config: { numbers: { style: "locale" } } },
  "analysis.diff": { primary: Array.from({ length: 200_000 }, () => 0), config: { mode: "patch" } },
  "analysis.aggregate": {
    primary: Array.from({ length: 1000 }, (_, i) => ({ id: i, text: "t".repeat(1000) })),
    config: { aggregations: Array.from({ length: 1000 }, (_, i) => ({ op: "distinct", field: "", as: `d${i}` })) },
  },
  "analysis.summarize": { primary: deepChain(5000, "l", 1), config: { maxFields: 10_000 } },
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
    const marked = registry.utilities
      .filter((utility) => utility.amplifies)
      .map((utility) => utility.id)
      .sort();
    expect(marked).toEqual(Object.keys(EXPLOSIVE).sort());
  });

  test.each(Object.keys(EXPLOSIVE))("%s: a 1 MiB budget stops an output of gigabytes with ResultTooLargeError", (id) => {
    const { primary, config } = EXPLOSIVE[id];
    expect(() => run(id, primary, config, new OutputBudget(MiB), id === "analysis.diff" ? [] : undefined)).toThrow(ResultTooLargeError);
  });

  test("within the budget the output is the unbudgeted one", () => {
    for (const id of ["structure.copy-move", "structure.find-replace", "convert.csv-to-json"]) {
      const utility = registry.find(id)!;
      const config = validateConfig(
        utility,
        id === "structure.find-replace"
          ? { search: "a", replacement: "bb" }
          : id === "convert.csv-to-json"
            ? {}
            : { operations: [{ from: "", to: "copy" }] },
      ) as never;
      const primary = id === "convert.csv-to-json" ? "a,b\n1,2\n" : { a: "banana" };
      expect(JSON.stringify(utility.run({ primary }, config, new OutputBudget(MiB)))).toBe(
        JSON.stringify(utility.run({ primary }, config, unlimitedBudget())),
      );
    }
  });
});

describe("amplification points found in the audit", () => {
  test("copy-move: 30 copies of the root of a 9-byte record stop at the budget (2^30 times the record unbounded)", () => {
    const operations = Array.from({ length: 30 }, (_, i) => ({ from: "", to: `c${i}` }));
    expect(JSON.stringify({ k: "v" }).length).toBe(9);
    expect(() => run("structure.copy-move", { k: "v" }, { operations }, new OutputBudget(MiB))).toThrow(ResultTooLargeError);
  });

  test("writing past the end of an array charges the nulls that pad it (copy-move, compute)", () => {
    const far = "items.99999999";
    expect(() => run("structure.copy-move", { items: [1] }, { operations: [{ from: "items.0", to: far }] }, new OutputBudget(MiB))).toThrow(
      ResultTooLargeError,
    );
    expect(() =>
      run("schema.compute", { items: [1] }, { fields: [{ target: far, expression: "{{ 1 }}" }] }, new OutputBudget(MiB)),
    ).toThrow(ResultTooLargeError);
    expect(run("structure.copy-move", { items: [1] }, { operations: [{ from: "items.0", to: "items.3" }] }, new OutputBudget(MiB))).toEqual(
      { items: [1, null, null, 1] },
    );
  });

  test("find-replace: $' (the rest of the text) per match is charged before it is built", () => {
    const config = { search: "a", replacement: "$'", regex: true };
    // 100,000 matches, each adding the rest of the string: 5·10^9 characters unbounded
    expect(() => run("structure.find-replace", ["a".repeat(100_000)], config, new OutputBudget(MiB))).toThrow(ResultTooLargeError);
    expect(
      run("structure.find-replace", ["xab"], { search: "(a)(b)", replacement: "[$2$1|$`|$'|$&|$$]", regex: true }, new OutputBudget(MiB)),
    ).toEqual(["x[ba|x||ab|$]"]);
  });

  test("find-replace's record-wise form (the streamed path) charges the same budget", () => {
    const utility = registry.find("structure.find-replace")!;
    const transform = utility.recordWise!(
      validateConfig(utility, { search: "a", replacement: "b".repeat(1000) }) as never,
      new OutputBudget(MiB),
    )!;
    expect(() => transform({ text: "a".repeat(10_000) }, 0)).toThrow(ResultTooLargeError);
  });

  test("compute: {{ $ }} writes a copy of the record so far, not the record itself (no cycle), and doubling it stops at the budget", () => {
    expect(run("schema.compute", { a: 1 }, { fields: [{ target: "self", expression: "{{ $ }}" }] }, new OutputBudget(MiB))).toEqual({
      a: 1,
      self: { a: 1 },
    });
    const fields = Array.from({ length: 40 }, (_, i) => ({ target: `c${i}`, expression: "{{ $ }}" }));
    expect(() => run("schema.compute", { a: 1 }, { fields }, new OutputBudget(MiB))).toThrow(ResultTooLargeError);
  });

  test("restructure: a wildcard path naming the whole input through $root in every record stops at the budget", () => {
    const primary = Array.from({ length: 2000 }, (_, i) => ({ i, text: "t".repeat(100) }));
    expect(() => run("structure.restructure", primary, { template: { all: "{{ $root }}" } }, new OutputBudget(MiB))).toThrow(
      ResultTooLargeError,
    );
  });

  test("format-values: an epoch 0 selected by path becomes a 24-character date, charged", () => {
    const primary = { at: Array.from({ length: 100_000 }, () => 0) };
    expect(() => run("cleanup.format-values", primary, { dates: { paths: ["at"] } }, new OutputBudget(MiB))).toThrow(ResultTooLargeError);
  });

  test("diff: a deep document's report repeats its long paths, charged per entry", () => {
    const next = deepChain(3000, "level", 1);
    const previous = deepChain(3000, "level", 2);
    expect(run("analysis.diff", next, {}, new OutputBudget(MiB), previous)).toMatchObject({ summary: { changed: 1 } });
    const wide = (value: number) => Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, deepChain(100, "level", value)]));
    expect(() => run("analysis.diff", wide(1), { mode: "patch" }, new OutputBudget(64 * 1024), wide(2))).toThrow(ResultTooLargeError);
  });

  test("add-localization: a thousand locales per text stop at the budget", () => {
    const locales = Array.from({ length: 1000 }, (_, i) => `x-${String(i).padStart(4, "0")}`).map((tag) => `en-${tag}`);
    expect(() =>
      run("convert.add-localization", { texts: Array.from({ length: 1000 }, () => "Save") }, { locales }, new OutputBudget(MiB)),
    ).toThrow(ResultTooLargeError);
  });
});

describe("within the budget, every amplifying utility gives the unbudgeted output", () => {
  const ORDINARY: Record<string, { primary: unknown; config: Record<string, unknown>; secondary?: unknown }> = {
    "structure.copy-move": {
      primary: [{ a: { b: 1 } }],
      config: {
        operations: [
          { from: "a", to: "c" },
          { from: "a.b", to: "d", action: "move" },
        ],
      },
    },
    "generate.generate-mock-data": { primary: { name: "{{ fullName }}", tags: ["x"] }, config: { count: 5, seed: 7 } },
    "convert.csv-to-json": { primary: "a,b.c\n1,x\n2,", config: { nested: true } },
    "convert.json-to-csv": { primary: [{ a: 1, b: { c: "=x" } }, { d: [1] }], config: {} },
    "structure.find-replace": {
      primary: [{ a: "banana", b: ["Ana"] }],
      config: { search: "(an)", replacement: "<$1$'>", regex: true, caseSensitive: false },
    },
    "cleanup.map-values": { primary: [{ a: "Y", b: 1 }], config: { mappings: { Y: { yes: true }, "1": "one" } } },
    "cleanup.redact": { primary: { mail: "write to a@b.example now", secret: 42 }, config: { keys: ["secret"] } },
    "schema.compute": {
      primary: [{ p: 2, q: 3, items: [1] }],
      config: {
        fields: [
          { target: "t", expression: "{{ p * q }}" },
          { target: "items.2", expression: "{{ concat(split('a-b', '-'), [t]) }}" },
        ],
      },
    },
    "structure.restructure": {
      primary: [{ u: { n: "x" }, l: [1, 2] }],
      config: { template: { name: "u.n", all: "l.*", s: "{{ upper(u.n) }}", k: { $value: [1] } } },
    },
    "schema.normalize": { primary: [{ "First Name": "a" }, { b: 1 }], config: { keyCase: "snake", fillValue: 0 } },
    "convert.add-localization": { primary: [{ title: "Save" }], config: { locales: ["en", "fr"], mode: "suffix", fill: "source" } },
    "structure.flatten-nest": { primary: [{ a: { b: [1, { c: 2 }] } }], config: {} },
    "cleanup.format-values": {
      primary: [{ n: 1234.5, d: "2024-01-02", s: " x " }],
      config: { numbers: { style: "currency" }, dates: { format: "locale" } },
    },
    "analysis.diff": { primary: { a: 1, b: [1, 2] }, secondary: { a: 2, b: [1], c: 3 }, config: { mode: "full-annotated" } },
    "analysis.aggregate": {
      primary: [
        { g: "a", v: 1 },
        { g: "a", v: 2 },
        { g: "b", v: 3 },
      ],
      config: {
        groupBy: ["g"],
        aggregations: [
          { op: "sum", field: "v" },
          { op: "distinct", field: "v" },
        ],
      },
    },
    "analysis.summarize": { primary: [{ a: 1, b: { c: "x" } }, { a: 2 }], config: {} },
  };

  test("every amplifying utility has an ordinary case", () => {
    expect(Object.keys(ORDINARY).sort()).toEqual(Object.keys(EXPLOSIVE).sort());
  });

  test.each(Object.keys(ORDINARY))("%s", (id) => {
    const { primary, config, secondary } = ORDINARY[id];
    const budgeted = run(id, primary, config, new OutputBudget(MiB), secondary);
    expect(JSON.stringify(budgeted)).toBe(JSON.stringify(run(id, primary, config, unlimitedBudget(), secondary)));
  });
});
