import { describe, expect, test } from "bun:test";
import utility, { configSchema } from "../../../src/utilities/convert/json-to-csv";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configure(configSchema, config)) as string;

describe("config", () => {
  test("defaults (columns: all, so absent)", () => {
    expect(configure(configSchema)).toEqual({ delimiter: ",", header: true, flatten: true, lineEnding: "\n", escapeFormulas: true });
  });
  test("types, enums, ranges and unknown fields are checked", () => {
    expect(configErrors(configSchema, { delimiter: ";;" })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: '"' })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { delimiter: "auto" })).toEqual(["/delimiter"]);
    expect(configErrors(configSchema, { columns: "a" })).toContain("/columns");
    expect(configErrors(configSchema, { columns: [] })).toEqual(["/columns"]);
    expect(configErrors(configSchema, { columns: ["a", 1] })).toEqual(["/columns/1"]);
    expect(configErrors(configSchema, { header: "no" })).toEqual(["/header"]);
    expect(configErrors(configSchema, { flatten: 1 })).toEqual(["/flatten"]);
    expect(configErrors(configSchema, { lineEnding: "\r" })).toContain("/lineEnding");
    expect(configErrors(configSchema, { escapeFormulas: "false" })).toEqual(["/escapeFormulas"]);
    expect(configErrors(configSchema, { quote: "'" })).toContain("/quote");
  });
});

describe("rows and columns", () => {
  test("an array of objects: every key in first-seen order; missing and null values are empty cells", () => {
    expect(run([{ name: "Alice", age: 30 }, { age: 25, city: "Paris", name: null }, {}])).toBe("name,age,city\nAlice,30,\n,25,Paris\n,,");
  });
  test("a single object is one row", () => {
    expect(run({ name: "Alice", active: true, score: -1.5 })).toBe("name,active,score\nAlice,true,-1.5");
  });
  test("empty input: no text; with columns, the header alone", () => {
    expect(run([])).toBe("");
    expect(run([{}])).toBe("");
    expect(run([], { columns: ["a", "b"] })).toBe("a,b");
  });
  test('a row of one empty cell is written as ""', () => {
    expect(run([{ a: "" }, { a: "x" }])).toBe('a\n""\nx');
  });
});

describe("quoting", () => {
  test("cells holding the delimiter, a quote, CR or LF are quoted; others are not", () => {
    expect(run([{ a: "x,y", b: 'say "hi"', c: "cr\rx", d: "lf\nx", e: "semi;colon", f: " pad " }])).toBe(
      'a,b,c,d,e,f\n"x,y","say ""hi""","cr\rx","lf\nx",semi;colon, pad ',
    );
  });
  test("header cells are quoted the same way", () => {
    expect(run([{ "a,b": 1 }])).toBe('"a,b"\n1');
  });
});

describe("delimiter", () => {
  test("one character, used between cells and for quoting decisions", () => {
    expect(run([{ a: "x,y", b: "p;q" }], { delimiter: ";" })).toBe('a;b\nx,y;"p;q"');
    expect(run([{ a: 1, b: 2 }], { delimiter: "\t" })).toBe("a\tb\n1\t2");
  });
});

describe("columns", () => {
  const people = [{ name: "Ada", address: { city: "London", zip: "N1" }, tags: ["a", "b"], "e.mail": "ada@x" }];
  test("chooses and orders the columns; the header is the column text", () => {
    expect(run(people, { columns: ["address.city", "name"] })).toBe("address.city,name\nLondon,Ada");
  });
  test("columns are paths: [0] indexes, escaped dots; a missing path is an empty cell", () => {
    expect(run(people, { columns: ["tags[0]", "tags.1", "e\\.mail", "nope.deeper"] })).toBe(
      "tags[0],tags.1,e\\.mail,nope.deeper\na,b,ada@x,",
    );
  });
  test("with flatten, a column may name a flat key holding a dot as written", () => {
    expect(run(people, { columns: ["e.mail"] })).toBe("e.mail\nada@x");
  });
  test("a path reaching an object or array writes its JSON text", () => {
    expect(run(people, { columns: ["address"], flatten: false })).toBe('address\n"{""city"":""London"",""zip"":""N1""}"');
  });
  test("a wildcard or malformed column is a UtilityConfigError naming it", () => {
    const error = (() => {
      try {
        run(people, { columns: ["name", "tags.*"] });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(UtilityConfigError);
    expect((error as UtilityConfigError).path).toBe("columns/1");
    expect(() => run(people, { columns: ["a..b"] })).toThrow(UtilityConfigError);
  });
});

describe("header", () => {
  test("true (default) writes the header row; false does not", () => {
    expect(run([{ a: 1, b: 2 }])).toBe("a,b\n1,2");
    expect(run([{ a: 1, b: 2 }], { header: false })).toBe("1,2");
    expect(run([{ a: 1 }], { header: false, columns: ["a"] })).toBe("1");
  });
});

describe("flatten", () => {
  const record = { id: 1, user: { name: "Ada", address: { city: "London" } }, tags: ["x", "y"], meta: {}, list: [] };
  test("true (default): nested objects become dotted columns; arrays and empty objects are JSON text", () => {
    expect(run([record])).toBe('id,user.name,user.address.city,tags,meta,list\n1,Ada,London,"[""x"",""y""]",{},[]');
  });
  test("columns follow first-seen order across records", () => {
    expect(run([{ a: { x: 1 } }, { b: 2, a: { y: 3 } }])).toBe("a.x,b,a.y\n1,,\n,2,3");
  });
  test("false: nested values are written as JSON text under their top-level key", () => {
    expect(run([record], { flatten: false })).toBe(
      'id,user,tags,meta,list\n1,"{""name"":""Ada"",""address"":{""city"":""London""}}","[""x"",""y""]",{},[]',
    );
  });
});

describe("lineEnding", () => {
  test('"\\n" (default) and "\\r\\n"', () => {
    expect(run([{ a: 1 }, { a: 2 }])).toBe("a\n1\n2");
    expect(run([{ a: 1 }, { a: 2 }], { lineEnding: "\r\n" })).toBe("a\r\n1\r\n2");
  });
});

describe("escapeFormulas", () => {
  const risky = [{ f: "=SUM(A1)", p: "+1", m: "-2", at: "@x", tab: "\tx", cr: "\rx", n: -3, ok: "a=b" }];
  test("true (default): text cells starting with = + - @ tab CR get a leading ', numbers do not", () => {
    expect(run(risky)).toBe("f,p,m,at,tab,cr,n,ok\n'=SUM(A1),'+1,'-2,'@x,'\tx,\"'\rx\",-3,a=b");
  });
  test("header cells are escaped too (keys are data)", () => {
    expect(run([{ "=cmd": 1 }])).toBe("'=cmd\n1");
  });
  test("false: written as they are", () => {
    expect(run(risky, { escapeFormulas: false })).toBe('f,p,m,at,tab,cr,n,ok\n=SUM(A1),+1,-2,@x,\tx,"\rx",-3,a=b');
  });
});

describe("prototype keys are data", () => {
  test("__proto__ and constructor are ordinary columns; a record without them has empty cells", () => {
    const record = JSON.parse('{"__proto__":{"polluted":1},"constructor":"c"}');
    expect(run([record, { x: 1 }])).toBe("__proto__.polluted,constructor,x\n1,c,\n,,1");
    expect(run([{ x: 1 }], { columns: ["constructor", "__proto__", "toString"] })).toBe("constructor,__proto__,toString\n,,");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("wrong input", () => {
  test.each([["text"], [42], [null], [true]])("primary %j is a UtilityError", (primary) => {
    expect(() => run(primary)).toThrow(UtilityError);
    expect(() => run(primary)).toThrow("takes an object or an array of objects");
  });
  test("an array element that is not an object is a UtilityError naming it", () => {
    expect(() => run([{ a: 1 }, "x"])).toThrow("element 1 of primary is a string");
    expect(() => run([[1, 2]])).toThrow("element 0 of primary is an array");
  });
});
