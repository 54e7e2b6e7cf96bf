import { describe, expect, test } from "bun:test";
import { cloneJson, describeType, mapRecords, objectRecord } from "../../../src/utilities/shared/records";
import { UtilityError } from "../../../src/utilities/types";

describe("records", () => {
  test("mapRecords applies to each element of an array, else to the value itself", () => {
    expect(mapRecords([1, 2], (r, i) => [r, i])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(mapRecords({ a: 1 }, (r, i) => [r, i])).toEqual([{ a: 1 }, null]);
    expect(mapRecords([], () => 1)).toEqual([]);
  });

  test("objectRecord names the element that is not an object", () => {
    expect(objectRecord({ a: 1 }, 0, "x.y")).toEqual({ a: 1 });
    expect(() => objectRecord("s", 3, "x.y")).toThrow(
      new UtilityError("x.y takes an object or an array of objects; element 3 of primary is a string"),
    );
    expect(() => objectRecord([], null, "x.y")).toThrow("primary is an array");
  });

  test("describeType", () => {
    expect([null, undefined, [], {}, 1, "s", true].map(describeType)).toEqual([
      "null",
      "missing",
      "an array",
      "an object",
      "a number",
      "a string",
      "a boolean",
    ]);
  });

  test("cloneJson copies deeply and keeps __proto__ as data", () => {
    const source = JSON.parse('{"a":[{"b":1}],"__proto__":{"x":1}}');
    const copy = cloneJson(source);
    expect(copy).toEqual(source);
    expect(copy.a[0]).not.toBe(source.a[0]);
    expect(Object.keys(copy)).toEqual(["a", "__proto__"]);
    expect(copy.x).toBeUndefined();
  });
});
