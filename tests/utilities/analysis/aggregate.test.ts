import { describe, expect, test } from "bun:test";
import utility, { type AggregateConfig, aggregate, configSchema } from "../../../src/utilities/analysis/aggregate";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configure(configSchema, config));

const sales = [
  { region: "EU", shop: { city: "Paris" }, amount: 10, item: "pen", tags: ["a"] },
  { region: "US", shop: { city: "NYC" }, amount: 5, item: "ink", tags: ["b", "c"] },
  { region: "EU", shop: { city: "Rome" }, amount: "n/a", item: "pen", tags: [] },
  { region: "EU", shop: { city: "Paris" }, amount: 30, item: "cap" },
];

describe("analysis.aggregate: config", () => {
  test("defaults: no grouping, one count", () => {
    expect(configure(configSchema)).toEqual({ groupBy: [], aggregations: [{ op: "count" }] });
    expect(run(sales)).toEqual([{ count: 4 }]);
  });
  test("schema refusals: unknown op, unknown member, empty as", () => {
    expect(configErrors(configSchema, { aggregations: [{ op: "mode", field: "a" }] })).toContain("/aggregations/0/op");
    expect(configErrors(configSchema, { aggregations: [{ op: "sum", field: "a", by: 1 }] })).toContain("/aggregations/0/by");
    expect(configErrors(configSchema, { aggregations: [{ op: "sum", field: "a", as: "" }] })).toContain("/aggregations/0/as");
    expect(configErrors(configSchema, { groupBy: "region" })).toContain("/groupBy");
    expect(configErrors(configSchema, { extra: true })).toContain("/extra");
  });
  test("config errors name the field: missing field, clashing names, bad paths", () => {
    const pathOf = (config: AggregateConfig) => {
      try {
        aggregate(sales, config);
      } catch (error) {
        expect(error).toBeInstanceOf(UtilityConfigError);
        return (error as UtilityConfigError).path;
      }
    };
    expect(pathOf({ groupBy: [], aggregations: [{ op: "sum" }] })).toBe("aggregations/0/field");
    expect(pathOf({ groupBy: [], aggregations: [{ op: "count" }, { op: "count" }] })).toBe("aggregations/1/as");
    expect(pathOf({ groupBy: ["region"], aggregations: [{ op: "count", as: "region" }] })).toBe("aggregations/0/as");
    expect(pathOf({ groupBy: ["a..b"], aggregations: [{ op: "count" }] })).toBe("groupBy/0");
    expect(pathOf({ groupBy: [], aggregations: [{ op: "sum", field: "a..b" }] })).toBe("aggregations/0/field");
  });
});

describe("analysis.aggregate: groups and ops", () => {
  test("groups in first-seen order: group keys by their path, then the aggregates with default names", () => {
    const output = run(sales, {
      groupBy: ["region"],
      aggregations: [
        { op: "count" },
        { op: "sum", field: "amount" },
        { op: "avg", field: "amount" },
        { op: "distinct", field: "shop.city" },
      ],
    });
    expect(output).toEqual([
      { region: "EU", count: 3, sum_amount: 40, avg_amount: 20, distinct_shop_city: ["Paris", "Rome"] },
      { region: "US", count: 1, sum_amount: 5, avg_amount: 5, distinct_shop_city: ["NYC"] },
    ]);
    expect(Object.keys((output as object[])[0])).toEqual(["region", "count", "sum_amount", "avg_amount", "distinct_shop_city"]);
  });

  test("several group paths, nested ones named by their path; a missing group value is null", () => {
    const output = run([...sales, { amount: 1 }], { groupBy: ["region", "shop.city"] });
    expect(output).toEqual([
      { region: "EU", "shop.city": "Paris", count: 2 },
      { region: "US", "shop.city": "NYC", count: 1 },
      { region: "EU", "shop.city": "Rome", count: 1 },
      { region: null, "shop.city": null, count: 1 },
    ]);
  });

  test("every op on one group; sum/avg/median skip non-numbers; count of a field counts its non-null values", () => {
    const rows = [{ v: 3 }, { v: "x" }, { v: 1 }, { v: null }, { v: 10 }, {}, { v: 1 }];
    const ops = ["count", "sum", "avg", "min", "max", "median", "first", "last", "distinct", "countDistinct"];
    const output = run(rows, { aggregations: ops.map((op) => ({ op, field: "v" })) });
    expect(output).toEqual([
      {
        count_v: 5,
        sum_v: 15,
        avg_v: 3.75,
        min_v: 1,
        max_v: 10,
        median_v: 2,
        first_v: 3,
        last_v: 1,
        distinct_v: [3, "x", 1, 10],
        countDistinct_v: 4,
      },
    ]);
  });

  test("min/max compare strings when there are no numbers; median of an odd count is the middle value", () => {
    const rows = [
      { s: "pear", n: 5 },
      { s: "apple", n: 1 },
      { s: "fig", n: 3 },
    ];
    expect(
      run(rows, {
        aggregations: [
          { op: "min", field: "s" },
          { op: "max", field: "s" },
          { op: "median", field: "n" },
        ],
      }),
    ).toEqual([{ min_s: "apple", max_s: "pear", median_n: 3 }]);
  });

  test("ops on a group without values: sum 0, avg/median/min/max/first/last null, distinct []", () => {
    const ops = ["sum", "avg", "median", "min", "max", "first", "last", "distinct", "countDistinct", "count"];
    expect(run([{}], { aggregations: ops.map((op) => ({ op, field: "v" })) })).toEqual([
      {
        sum_v: 0,
        avg_v: null,
        median_v: null,
        min_v: null,
        max_v: null,
        first_v: null,
        last_v: null,
        distinct_v: [],
        countDistinct_v: 0,
        count_v: 0,
      },
    ]);
  });

  test("`as` names the output key; wildcard fields contribute every value", () => {
    expect(
      run(sales, {
        aggregations: [
          { op: "countDistinct", field: "tags.*", as: "tagCount" },
          { op: "count", field: "tags.*", as: "tagUses" },
        ],
      }),
    ).toEqual([{ tagCount: 3, tagUses: 3 }]);
  });

  test("an empty array: one whole-array group without groupBy, no groups with it", () => {
    expect(run([])).toEqual([{ count: 0 }]);
    expect(run([], { groupBy: ["region"] })).toEqual([]);
  });

  test('group values are compared as JSON: 1 and "1" are different groups, objects group by content', () => {
    expect(run([{ k: 1 }, { k: "1" }, { k: { a: 1 } }, { k: { a: 1 } }], { groupBy: ["k"] })).toEqual([
      { k: 1, count: 1 },
      { k: "1", count: 1 },
      { k: { a: 1 }, count: 2 },
    ]);
  });

  test("wrong input types are a UtilityError: primary not an array, an element not an object", () => {
    expect(() => run({ a: 1 })).toThrow(UtilityError);
    expect(() => run({ a: 1 })).toThrow(/primary is an object/);
    expect(() => run([{ a: 1 }, "x"])).toThrow(/element 1 is a string/);
  });
});
