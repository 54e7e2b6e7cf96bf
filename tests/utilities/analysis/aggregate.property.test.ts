import { expect, test } from "bun:test";
import fc from "fast-check";
import { aggregate } from "../../../src/utilities/analysis/aggregate";

const record = fc.record(
  { group: fc.oneof(fc.constantFrom("a", "b", "c"), fc.integer({ min: 0, max: 3 }), fc.constant(null)), v: fc.jsonValue() },
  { requiredKeys: [] },
);

test("the counts of all groups sum to the array length", () => {
  fc.assert(
    fc.property(fc.array(record), fc.boolean(), (rows, grouped) => {
      const output = aggregate(rows, { groupBy: grouped ? ["group"] : [], aggregations: [{ op: "count" }] }) as { count: number }[];
      expect(output.reduce((total, row) => total + row.count, 0)).toBe(rows.length);
    }),
  );
});
