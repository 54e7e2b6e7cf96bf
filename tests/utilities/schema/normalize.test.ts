import { describe, expect, test } from "bun:test";
import utility, { configSchema, convertKey } from "../../../src/utilities/schema/normalize";
import { UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configure(configSchema, config));
/** keys in order, at every depth, so that tests see order (toEqual does not) */
const shape = (value: unknown): string => JSON.stringify(value);

describe("config", () => {
  test("defaults", () => {
    expect(configure(configSchema)).toEqual({ keyCase: "preserve", trimKeys: true, sortKeys: false, fillMissing: true, fillValue: null });
  });
  test("types, enums and unknown fields are checked; fillValue takes any JSON", () => {
    expect(configErrors(configSchema, { keyCase: "title" })).toContain("/keyCase");
    expect(configErrors(configSchema, { trimKeys: "yes" })).toEqual(["/trimKeys"]);
    expect(configErrors(configSchema, { sortKeys: 1 })).toEqual(["/sortKeys"]);
    expect(configErrors(configSchema, { fillMissing: null })).toEqual(["/fillMissing"]);
    expect(configErrors(configSchema, { fillValue: { any: ["json"] } })).toEqual([]);
    expect(configErrors(configSchema, { case: "camel" })).toContain("/case");
  });
});

describe("keyCase", () => {
  test("camel: `First Name`, `first_name`, `firstName` all become `firstName`", () => {
    for (const key of ["First Name", "first_name", "firstName", "first-name", "FIRST_NAME", "FirstName"]) {
      expect(convertKey(key, "camel")).toBe("firstName");
    }
  });
  test.each([
    ["preserve", "userID", "userID"],
    ["camel", "XMLHttpRequest", "xmlHttpRequest"],
    ["camel", "user ID 2", "userId2"],
    ["snake", "First Name", "first_name"],
    ["snake", "userID", "user_id"],
    ["snake", "address1Line", "address1_line"],
    ["kebab", "firstName", "first-name"],
    ["kebab", "First_Name", "first-name"],
    ["pascal", "first name", "FirstName"],
    ["pascal", "e-mail", "EMail"],
    ["lower", "First Name", "first name"],
    ["upper", "first_name", "FIRST_NAME"],
    ["camel", "ÉCOLE primaire", "écolePrimaire"],
    ["camel", "_", "_"],
    ["snake", "$$", "$$"],
  ])("%s: %j → %j", (keyCase, key, expected) => {
    expect(convertKey(key, keyCase as never)).toBe(expected);
  });
  test("applies at every depth, inside arrays too; values are untouched", () => {
    expect(run({ "User Info": { "Home Address": [{ "Zip Code": "First Name" }] } }, { keyCase: "snake" })).toEqual({
      user_info: { home_address: [{ zip_code: "First Name" }] },
    });
  });
  test("keys that normalise to the same key become one member at the first's place, the last value winning", () => {
    expect(shape(run({ first_name: "a", age: 1, firstName: "b" }, { keyCase: "camel" }))).toBe('{"firstName":"b","age":1}');
  });
  test("preserve (default) keeps keys as written (but trimmed)", () => {
    expect(shape(run({ "First Name": 1, first_name: 2 }))).toBe('{"First Name":1,"first_name":2}');
  });
});

describe("trimKeys", () => {
  test("true (default): whitespace around keys is trimmed, at every depth", () => {
    expect(shape(run({ " name ": { "\tcity\n": 1 } }))).toBe('{"name":{"city":1}}');
  });
  test("false: keys keep their whitespace (case conversion still splits on it)", () => {
    expect(shape(run({ " name ": 1 }, { trimKeys: false }))).toBe('{" name ":1}');
    expect(shape(run({ " name ": 1 }, { trimKeys: false, keyCase: "lower" }))).toBe('{" name ":1}');
  });
});

describe("sortKeys", () => {
  test("false (default): key order is kept", () => {
    expect(shape(run({ b: 1, a: { d: 1, c: 2 } }))).toBe('{"b":1,"a":{"d":1,"c":2}}');
  });
  test("true: keys sorted at every depth, after renaming", () => {
    expect(shape(run({ b: 1, a: { d: 1, c: [{ z: 1, y: 2 }] }, C: 0 }, { sortKeys: true }))).toBe(
      '{"C":0,"a":{"c":[{"y":2,"z":1}],"d":1},"b":1}',
    );
    expect(shape(run({ Zeta: 1, alpha: 2 }, { sortKeys: true, keyCase: "lower" }))).toBe('{"alpha":2,"zeta":1}');
  });
});

describe("fillMissing and fillValue", () => {
  const records = [{ id: 1, name: "Ada" }, { email: "b@x", id: 2 }, { name: "Cy" }];
  test("true (default): every object of an array gets the union of the keys in first-seen order, filled with null", () => {
    expect(shape(run(records))).toBe(
      '[{"id":1,"name":"Ada","email":null},{"id":2,"name":null,"email":"b@x"},{"id":null,"name":"Cy","email":null}]',
    );
  });
  test("fillValue sets the filled value (any JSON, each a separate copy)", () => {
    const output = run(records, { fillValue: { missing: true } }) as Record<string, unknown>[];
    expect(output[2]).toEqual({ id: { missing: true }, name: "Cy", email: { missing: true } });
    expect(output[2].id).not.toBe(output[2].email);
    expect((run(records, { fillValue: "" }) as unknown[])[2]).toEqual({ id: "", name: "Cy", email: "" });
  });
  test("applies to nested arrays, to the object elements only, on the normalised keys", () => {
    expect(shape(run({ rows: [{ "A B": 1 }, 2, { a_b: 3, c: 4 }, null] }, { keyCase: "camel" }))).toBe(
      '{"rows":[{"aB":1,"c":null},2,{"aB":3,"c":4},null]}',
    );
  });
  test("with sortKeys the union is sorted", () => {
    expect(shape(run([{ b: 1 }, { a: 2 }], { sortKeys: true }))).toBe('[{"a":null,"b":1},{"a":2,"b":null}]');
  });
  test("false: objects keep their own keys", () => {
    expect(shape(run(records, { fillMissing: false }))).toBe(shape(records));
  });
});

describe("empty and prototype-named input", () => {
  test("empty containers", () => {
    expect(run([])).toEqual([]);
    expect(run({})).toEqual({});
    expect(run([{}, {}])).toEqual([{}, {}]);
  });
  test("__proto__ and constructor are ordinary keys, renamed and filled without reaching a prototype", () => {
    const input = JSON.parse('[{"__proto__":{"polluted":1}},{"constructor":2," __proto__ ":3}]');
    const output = run(input, { keyCase: "camel" }) as object[];
    expect(JSON.stringify(output)).toBe('[{"proto":{"polluted":1},"constructor":null},{"proto":3,"constructor":2}]');
    const preserved = run(input) as object[];
    expect(JSON.stringify(preserved)).toBe('[{"__proto__":{"polluted":1},"constructor":null},{"__proto__":3,"constructor":2}]');
    expect(Object.getPrototypeOf(preserved[0])).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("wrong input", () => {
  test.each([["text"], [42], [null], [false]])("primary %j is a UtilityError", (primary) => {
    expect(() => run(primary)).toThrow(UtilityError);
    expect(() => run(primary)).toThrow("takes an object or an array");
  });
});
