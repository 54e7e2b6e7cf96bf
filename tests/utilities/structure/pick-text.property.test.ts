/**
 * pick-fields over the input's text (runOnText, utilities/shared/pick-text.ts) gives the very bytes
 * that parsing the text, picking and JSON.stringify give, or declines; it never answers for text that
 * JSON.parse refuses. The texts vary what JSON allows and the usual path smooths over: whitespace between
 * tokens, escapes of every kind (keys included), numbers written in other forms, duplicate keys, a byte
 * order mark, integer-like keys, `__proto__`.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseJsonBytes } from "../../../src/core/json/parse";
import { runOnText, runSteps, validateConfig } from "../../../src/engine/execution";
import pickFieldsUtility, { pickFields, configSchema as pickSchema } from "../../../src/utilities/structure/pick-fields";
import { configure } from "../shared/configure";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const KEYS = ["a", "b", "id", "name", "1", "__proto__", "a.b", "", "é", 'x"y', "/", "😀"];
const CHARACTERS = ["a", "b", "i", "d", "é", "😀", "/", '"', "\\", "\n", "\u0000", "\u001f", "\u007f", "\u2028", "\ud800", "\udfff"];
const NUMBERS = [
  "0",
  "7",
  "-12",
  "123456789012345",
  "1234567890123456",
  "-9007199254740993",
  "100",
  "1E2",
  "1e-7",
  "1.0",
  "-0",
  "2.50",
  "0.5E+3",
  "1e400",
];
const SPACE = fc.constantFrom("", "", "", " ", "\n  ", "\t", "\r\n");

const unicodeEscapes = (text: string, upper: boolean) =>
  Array.from({ length: text.length }, (_, k) => text.charCodeAt(k).toString(16).padStart(4, "0"))
    .map((hex) => `\\u${upper ? hex.toUpperCase() : hex}`)
    .join("");

/** One character as JSON text may write it: as JSON.stringify does, as \u escapes (either case), or `\/`. */
function written(character: string, style: number): string {
  if (style === 1 || style === 2) return unicodeEscapes(character, style === 2);
  if (style === 3 && character === "/") return "\\/";
  return JSON.stringify(character).slice(1, -1);
}

/** A string's JSON text, each character written in a style of its own (mostly as JSON.stringify writes it). */
const stringText = (characters: fc.Arbitrary<string[]>) =>
  characters.chain((list) =>
    fc
      .array(fc.constantFrom(0, 0, 0, 0, 1, 2, 3), { minLength: list.length, maxLength: list.length })
      .map((styles) => `"${list.map((character, index) => written(character, styles[index])).join("")}"`),
  );

const keyText = fc.constantFrom(...KEYS).chain((key) => stringText(fc.constant([...key])));

const { json } = fc.letrec<{ json: string; object: string; array: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    stringText(fc.array(fc.constantFrom(...CHARACTERS), { maxLength: 4 })),
    fc.constantFrom(...NUMBERS),
    fc.constantFrom("true", "false", "null"),
    tie("object"),
    tie("array"),
  ),
  object: fc
    .array(fc.tuple(SPACE, keyText, SPACE, SPACE, tie("json"), SPACE), { maxLength: 5 })
    .map((members) => `{${members.map(([s1, key, s2, s3, value, s4]) => `${s1}${key}${s2}:${s3}${value}${s4}`).join(",")}}`),
  array: fc
    .array(fc.tuple(SPACE, tie("json"), SPACE), { maxLength: 4 })
    .map((items) => `[${items.map((item) => item.join("")).join(",")}]`),
}));

/** A record: members with distinct keys (mostly, so that the text path has something to answer), or any. */
const record = fc.oneof(
  fc
    .uniqueArray(fc.tuple(fc.constantFrom(...KEYS), SPACE, json, SPACE), { selector: ([key]) => key, maxLength: 6 })
    .chain((members) =>
      fc
        .tuple(...members.map(([key]) => stringText(fc.constant([...key]))))
        .map((keys) => `{${members.map(([, s1, value, s2], index) => `${s1}${keys[index]}:${value}${s2}`).join(",")}}`),
    ),
  json.filter((text) => text.startsWith("{")),
);

/** The whole input: an array of records (now and then an element that is not an object), or one record. */
const input = fc
  .tuple(
    fc.boolean(),
    SPACE,
    fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .array(fc.tuple(SPACE, record, SPACE), { maxLength: 5 })
          .map((items) => `[${items.map((item) => item.join("")).join(",")}]`),
      },
      { weight: 2, arbitrary: record },
      { weight: 1, arbitrary: fc.array(json, { minLength: 1, maxLength: 3 }).map((items) => `[${items.join(",")}]`) },
    ),
    SPACE,
  )
  .map(([bom, before, text, after]) => `${bom ? "\ufeff" : ""}${before}${text}${after}`);

const SEGMENTS = ["a", "b", "id", "name", "1", "__proto__", "a\\.b", "é", 'x"y', "/", "😀", "missing", "*", "[0]"];
const paths = fc.array(
  fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 3 }).map((segments) => segments.join(".").replace(/\.\[/g, "[")),
  { minLength: 1, maxLength: 4 },
);

/** What the usual path answers for these bytes: the output's text, or the error's name and message. */
function usualAnswer(bytes: Uint8Array, config: { paths: string[] }): string {
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) return `not JSON: ${parsed.message}`;
  try {
    return JSON.stringify(pickFields(parsed.value, configure(pickSchema, config)));
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

/** The engine's text path (runOnText: the text's checks, then the utility's own): the output, or undefined when it declines. */
function onText(bytes: Uint8Array, config: { paths: string[] }): Uint8Array | undefined {
  const result = runOnText({ utility: pickFieldsUtility, config: configure(pickSchema, config) }, bytes, 1 << 30);
  return result && "outputChunks" in result ? result.outputChunks[0] : undefined;
}

describe("pick-fields over the text", () => {
  test("answers byte for byte as the usual path does, or declines", () => {
    let answered = 0;
    let runs = 0;
    fc.assert(
      fc.property(input, paths, (text, chosen) => {
        runs++;
        const bytes = encoder.encode(text);
        const config = { paths: chosen };
        const output = onText(bytes, config);
        if (output === undefined) return;
        answered++;
        expect(decoder.decode(output)).toBe(usualAnswer(bytes, config));
      }),
      { numRuns: 4000 },
    );
    // most of the inputs are records with distinct keys and paths without wildcards: the path answers them
    expect(answered).toBeGreaterThan(runs / 4);
  });

  test("never answers for text that JSON.parse refuses: bytes deleted, inserted or replaced", () => {
    const significant = [...'{}[],:"\\ \n0123456789eE+-.tfnrlu/'].map((character) => character.charCodeAt(0));
    const mutation = fc.tuple(
      fc.constantFrom("delete", "insert", "replace"),
      fc.nat(),
      fc.oneof(fc.constantFrom(...significant), fc.integer({ min: 0, max: 255 })),
    );
    let refused = 0;
    let answered = 0;
    fc.assert(
      fc.property(input, paths, fc.array(mutation, { minLength: 1, maxLength: 3 }), (text, chosen, mutations) => {
        let bytes = encoder.encode(text);
        for (const [kind, position, byte] of mutations) {
          const at = bytes.length === 0 ? 0 : position % bytes.length;
          const list = [...bytes];
          if (kind === "delete") list.splice(at, 1);
          else if (kind === "insert") list.splice(at, 0, byte);
          else list[at] = byte;
          bytes = new Uint8Array(list);
        }
        const config = { paths: chosen };
        const output = onText(bytes, config);
        const usual = usualAnswer(bytes, config);
        if (usual.startsWith("not JSON")) {
          refused++;
          expect(output).toBeUndefined();
        } else if (output !== undefined) {
          answered++;
          expect(decoder.decode(output)).toBe(usual);
        }
      }),
      { numRuns: 6000 },
    );
    expect(refused).toBeGreaterThan(1000);
    expect(answered).toBeGreaterThan(100);
  });

  test("the cases the usual path smooths over", () => {
    const cases: [text: string, paths: string[]][] = [
      ['[{"id":1E2,"name":"\\u0041\\/b"},{"id":-0,"name":1.50}]', ["id", "name"]],
      ['[{"\\u0069d":12345678901234567890,"x":1}]', ["id"]],
      ['\ufeff [ { "id" : [ 1 , { "a" : 2 } ] , "name" : { "b" : [ ] } } ] ', ["id", "name"]],
      ['[{"a":{"b":1,"c":2},"b":3},{"a":4},{"a":{"c":5}},{"a":null}]', ["a.b"]],
      ['[{"__proto__":{"x":1},"2":"two","1":"one","id":0}]', ["__proto__", "id"]],
      ['{"name":"\\ud800","id":"\\u2028"}', ["name", "id"]],
      ['[{"id":1},{}]', ["missing"]],
    ];
    for (const [text, chosen] of cases) {
      const bytes = encoder.encode(text);
      const output = onText(bytes, { paths: chosen });
      expect(output).toBeDefined();
      expect(decoder.decode(output!)).toBe(usualAnswer(bytes, { paths: chosen }));
    }
  });

  test("declines what it does not cover, and the usual path answers it", () => {
    const cases: [text: string, paths: string[]][] = [
      ['[{"id":1,"id":2}]', ["id"]], // JSON.parse keeps the last value at the first one's place
      ['[{"id":1,"\\u0069d":2}]', ["id"]],
      ['[{"a":[{"b":1}]}]', ["a.b"]], // a path into an array
      ['[{"id":1}]', ["*"]],
      ['[{"1":1}]', ["1"]], // objects put integer-like keys first
      ['[{"id":1},2]', ["id"]], // an element that is not an object: the usual path's error
      ["[1,2]", ["id"]],
      ['"text"', ["id"]],
      ['[{"id":1}] x', ["id"]],
      ['[{"id":"\u0001"}]', ["id"]], // a raw control character
      ['[{"id":01}]', ["id"]],
      ['[{"id":1.}]', ["id"]],
      ['[{"id":"\\x"}]', ["id"]],
      ['[{"id":tru}]', ["id"]],
      ['[{"id":1},]', ["id"]],
    ];
    for (const [text, chosen] of cases) expect(onText(encoder.encode(text), { paths: chosen })).toBeUndefined();
    expect(onText(new Uint8Array([0x5b, 0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d, 0x5d]), { paths: ["a"] })).toBeUndefined(); // not UTF-8
    expect(onText(encoder.encode(`${"[".repeat(10_001)}${"]".repeat(10_001)}`), { paths: ["a"] })).toBeUndefined();
  });

  test("the engine runs pick-fields alone on text through it, with the usual path's bytes either way", async () => {
    const config = validateConfig(pickFieldsUtility, { paths: ["id", "a.b"] });
    for (const text of ['[{"id":1,"a":{"b":[1, 2],"c":3}}, {"a":{"c":1}}]', '[{"id":1,"id":2}]']) {
      const bytes = encoder.encode(text);
      const result = await runSteps([{ utility: pickFieldsUtility, config }], { json: bytes }, false, 1 << 20);
      const usual = await runSteps([{ utility: pickFieldsUtility, config }], { value: JSON.parse(text) }, false, 1 << 20);
      const output = "outputChunks" in result ? decoder.decode(result.outputChunks[0]) : result.outputJson;
      expect(output).toBe("outputJson" in usual ? usual.outputJson : "");
      // the first answers from the text (its bytes), the second, with a duplicate key, as usual (text)
      expect("outputChunks" in result).toBe(text.includes('"a"'));
    }
  });

  test("an output over the limit is left to the usual path, which refuses it", async () => {
    const config = validateConfig(pickFieldsUtility, { paths: ["id"] });
    const bytes = encoder.encode(JSON.stringify(Array.from({ length: 100 }, (_, id) => ({ id, other: id }))));
    await expect(runSteps([{ utility: pickFieldsUtility, config }], { json: bytes }, false, 100)).rejects.toThrow();
  });
});
