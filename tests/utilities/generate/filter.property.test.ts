import { expect, test } from "bun:test";
import fc from "fast-check";
import { filter } from "../../../src/utilities/generate/filter";

test("filter with condition `true` is the identity on any array", () => {
  fc.assert(
    fc.property(fc.array(fc.jsonValue()), (array) => {
      expect(filter(array, { condition: "true", match: "all" })).toEqual(array);
    }),
  );
});

test("filter with `false` keeps nothing, and a limit caps the count", () => {
  fc.assert(
    fc.property(fc.array(fc.jsonValue()), fc.nat(10), (array, limit) => {
      expect(filter(array, { condition: "{{ false }}", match: "all" })).toEqual([]);
      expect(filter(array, { condition: "true", match: "all", limit })).toEqual(array.slice(0, limit));
    }),
  );
});
