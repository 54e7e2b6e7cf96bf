import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { elementSpans } from "../../../src/core/json/scan";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The elements of the array text as elementSpans splits it, each parsed on its own; undefined when it declines. */
function split(text: string): unknown[] | undefined {
  const bytes = encode(text);
  return elementSpans(bytes)?.map(({ start, end }) => JSON.parse(decode(bytes.subarray(start, end))));
}

describe("elementSpans", () => {
  test("any array, compact or indented, splits into exactly its elements", () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.constantFrom(undefined, 2, "\t"), (array, indent) => {
        const text = JSON.stringify(array, null, indent);
        expect(split(` ${text}\n`)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  test("strings holding brackets, commas, quotes and escapes do not end an element", () => {
    expect(split(String.raw`[ "a,]}" , {"k\"]":"\\"} ,"\u005d"]`)).toEqual(["a,]}", { 'k"]': "\\" }, "]"]);
  });

  test("declines what is not an array or whose own structure is off", () => {
    for (const text of [`{"a":1}`, `"[1]"`, `[1,,2]`, `[1,2,]`, `[1 2]`, `[1,2}`, `[1] trailing`, `[1`, `["open]`, `[{"a":[1}]`, ``]) {
      expect(split(text)).toBeUndefined();
    }
  });

  test("an element the scan passes but JSON.parse refuses is still refused", () => {
    expect(() => split(`[tru, {"a":1}]`)).toThrow();
  });
});
