/**
 * Hostile expressions: every one is refused while compiling (UtilityConfigError → 400 before anything
 * runs). A canary global proves that nothing was executed either way.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { compileExpression, compileTemplate } from "../../src/utilities/shared/expressions";
import { UtilityConfigError } from "../../src/utilities/types";
import { createTestApp, type TestApp } from "../support/app";

const canary = globalThis as { pwned?: boolean };
afterEach(() => {
  expect(canary.pwned).toBeUndefined();
});

const HOSTILE: [string, RegExp][] = [
  ['"".constructor.constructor("globalThis.pwned = true")()', /listed functions|constructor/],
  ['"".constructor', /'constructor' is not allowed/],
  ["constructor", /'constructor' is not allowed/],
  ['$["constructor"]["constructor"]("return process")()', /listed functions|constructor/],
  ["a.constructor.prototype", /'constructor' is not allowed/],
  ["__proto__", /'__proto__' is not allowed/],
  ["$.__proto__.polluted", /'__proto__' is not allowed/],
  ['$["__proto__"]', /'__proto__' is not allowed/],
  ["x.prototype", /'prototype' is not allowed/],
  ["tags.constructor.call(1)", /unknown method '.call\(\)'|constructor/],
  ["firstName.toString.constructor", /'constructor' is not allowed/],
  ["this", /'this' is not available/],
  ["this.constructor", /'this' is not available|constructor/],
  ["process", /'process' is not available/],
  ["process.env.HOME", /'process' is not available/],
  ["process.exit(1)", /'process' is not available/],
  ["process.mainModule.require('fs')", /'process' is not available/],
  ["Bun", /'Bun' is not available/],
  ["Bun.spawnSync(['touch', '/tmp/pwned'])", /'Bun' is not available/],
  ["Bun.file('/etc/passwd').text()", /'Bun' is not available/],
  ["require", /'require' is not available/],
  ["require('child_process')", /unknown function 'require'/],
  ["globalThis", /'globalThis' is not available/],
  ["globalThis.pwned", /'globalThis' is not available/],
  ["global.process", /'global' is not available/],
  ["Function('globalThis.pwned = true')()", /listed functions|Function/],
  ["Function", /'Function' is not available/],
  ["eval('1')", /unknown function 'eval'/],
  ["import('fs')", /import|Unexpected|unknown function/],
  ["Object.keys($)", /'Object' is not available/],
  ["Reflect.get($, 'x')", /'Reflect' is not available/],
  ["Math.constructor", /'constructor' is not allowed/],
  ["Math.abs.constructor('x')()", /listed functions|constructor/],
  ["Date.constructor", /'constructor' is not allowed/],
  ["Date.now.call(null)", /unknown method '.call\(\)'/],
  ["lower.apply(null, [1])", /unknown method '.apply\(\)'/],
  ["toString()", /unknown function 'toString'/],
  ["valueOf()", /unknown function 'valueOf'/],
  ["hasOwnProperty('x')", /unknown function 'hasOwnProperty'/],
  ["a = 1", /Unexpected/],
  ["a; process", /one expression|process/],
  ["new Function('x')", /one expression|Function/],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal is the expression under test
  ["`${process}`", /Unexpected/],
  ["/a+/.test(s)", /Unexpected/],
  ["(() => 1)()", /Unexpected|expression/],
  ["x => x", /Unexpected/],
  ["1".repeat(1001), /longer than 1000/],
  [`1${"+1".repeat(500)}`, /longer than 1000/],
  [`${"(".repeat(50)}1${")".repeat(50)}`, /nested deeper than 20/],
  [`${"[".repeat(30)}1${"]".repeat(30)}`, /nested deeper than 20/],
  [`${"lower(".repeat(25)}'x'${")".repeat(25)}`, /nested deeper than 20/],
  [`${"-".repeat(30)}1`, /nested deeper than 20/],
  [`${"(".repeat(600)}`, /longer than 1000|nested deeper than 20/],
];

describe("hostile expressions are refused before anything runs", () => {
  test.each(HOSTILE)("%s", (source, message) => {
    let error: unknown;
    try {
      compileExpression(source, "/condition");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UtilityConfigError);
    expect((error as UtilityConfigError).path).toBe("/condition");
    expect((error as Error).message).toMatch(message);
  });

  test.each(HOSTILE.slice(0, 12))("inside a template: {{ %s }}", (source) => {
    expect(() => compileTemplate(`x {{ ${source} }} y`, "/template")).toThrow(UtilityConfigError);
  });
});

describe("over HTTP every hostile expression is a 400 naming the config field", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  test("generate.filter condition and schema.compute expression", async () => {
    for (const [source] of HOSTILE) {
      const filtered = await app.json("POST", "/api/v1/utilities/generate.filter", {
        body: { inputs: { primary: [{ a: 1 }] }, config: { condition: source } },
      });
      expect(filtered.status).toBe(400);
      expect(filtered.body.errors[0].path).toBe("/config/condition");
      const computed = await app.json("POST", "/api/v1/utilities/schema.compute", {
        body: { inputs: { primary: { a: 1 } }, config: { fields: [{ target: "x", expression: `{{ ${source} }}` }] } },
      });
      expect(computed.status).toBe(400);
      expect(computed.body.code).toBe("validation_failed");
    }
  });
});

describe("data can never reach a prototype", () => {
  test("JSON keys named like prototype members are plain data, read or not", () => {
    const record = JSON.parse('{"__proto__": {"isAdmin": true}, "constructor": {"name": "x"}, "k1": "__proto__", "k2": "constructor"}');
    const compiled = compileExpression("[$[k1], $[k2], isAdmin, k1.length]", "/x");
    expect(compiled.evaluate({ record })).toEqual([null, null, null, 9]);
    expect(({} as { isAdmin?: boolean }).isAdmin).toBeUndefined();
  });

  test("inherited members of data (toString, map, length of objects) read as null", () => {
    const compiled = compileExpression("[$.toString, tags.map, obj.valueOf, obj.length]", "/x");
    expect(compiled.evaluate({ record: { tags: [], obj: {} } })).toEqual([null, null, null, null]);
  });

  test("no value an expression yields is ever a function", () => {
    const sources = ["$", "Math", "Date", "lower", "tags", "$root"];
    for (const source of sources) {
      const value = compileExpression(source, "/x").evaluate({ record: { tags: [1] }, root: { a: 1 } });
      expect(typeof value).not.toBe("function");
    }
  });
});
