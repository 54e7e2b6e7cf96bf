/**
 * Property: for random documents (nested objects, arrays, integers past 2^53, 1.0 beside 1, nulls,
 * missing paths, strings that look like numbers) and random filters and sorts, Kiln's pages, followed
 * to the end, hold exactly the documents an in-memory oracle selects, each once, in the sort's order.
 *
 * The oracle is sift (MongoDB's query language in JavaScript) with Kiln's comparisons plugged in, since
 * §6 parts from MongoDB in three places: JSON types are kept apart (MongoDB's `$eq: null` also matches
 * a missing field; here null matches null only, `$exists: false` finds the missing), numbers compare
 * exactly (sift compares JavaScript numbers, which cannot tell 12345678901234567890 from
 * 12345678901234567891; here they are decimals read from the text), and conditions on one array field
 * are checked on the same element (MongoDB checks each on any element). The generator keeps arrays to
 * /tags with at most one condition there and no $ne/$nin on it, where both semantics agree; numbers are
 * objects (Num) carrying their literal, compared as exact decimals with BigInt.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import sift, { createEqualsOperation } from "sift";
import { createTestApp, type TestApp } from "../../support/app";
import { random } from "../../support/random";
import { buildNow } from "./support";

const DOCUMENTS = Number(process.env.QUERY_PROPERTY_DOCUMENTS ?? 120);
const QUERIES = Number(process.env.QUERY_PROPERTY_QUERIES ?? 40);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** A number as written. */
class Num {
  constructor(readonly literal: string) {}
}

const SEED = Number(process.env.QUERY_PROPERTY_SEED ?? 20261127);
const rand = random(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];

const NUMBERS = [
  "1",
  "1.0",
  "-2",
  "0",
  "-0",
  "2.5",
  "2.50",
  "12345678901234567890",
  "12345678901234567891",
  "1e2",
  "100",
  "99.999",
  "-1e-3",
];
const STRINGS = ['"a"', '"ab"', '"abc"', '"b"', '""', '"é"', '"1"', '"10"', '"a\\u0000b"'];
const OTHERS = ["null", "true", "false"];
const POOLS: Record<string, string[]> = {
  "/a": [...NUMBERS, ...NUMBERS, '"1"', "null", "true"],
  "/b": [...STRINGS, ...STRINGS, "1", "2", "null"],
  "/c/d": [...NUMBERS, ...STRINGS, ...OTHERS],
  "/tags": ['"x"', '"y"', '"z"', '"xy"'],
};
const SCALAR_FIELDS = ["/a", "/b", "/c/d"];

/** A random document's text, as written (a field may be missing). */
function documentText(): string {
  const members: string[] = [];
  if (rand() < 0.85) members.push(`"a":${pick(POOLS["/a"])}`);
  if (rand() < 0.85) members.push(`"b":${pick(POOLS["/b"])}`);
  const c = rand();
  if (c < 0.6) members.push(`"c":{"d":${pick(POOLS["/c/d"])},"e":1}`);
  else if (c < 0.7) members.push(`"c":5`);
  else if (c < 0.8) members.push(`"c":{}`);
  const tags = rand();
  if (tags < 0.5) members.push(`"tags":[${Array.from({ length: Math.floor(rand() * 4) }, () => pick(POOLS["/tags"])).join(",")}]`);
  else if (tags < 0.7) members.push(`"tags":${pick(POOLS["/tags"])}`);
  return `{${members.join(", ")}}`;
}

/** JSON text → values, numbers kept as Num (the oracle's lossless reading). */
function parse(text: string): unknown {
  let at = 0;
  const ws = () => {
    while (/\s/.test(text[at])) at++;
  };
  const value = (): unknown => {
    ws();
    const char = text[at];
    if (char === "{") {
      at++;
      const object: Record<string, unknown> = {};
      ws();
      if (text[at] === "}") return (at++, object);
      for (;;) {
        ws();
        const key = value() as string;
        ws();
        at++; // :
        object[key] = value();
        ws();
        if (text[at++] === "}") return object;
      }
    }
    if (char === "[") {
      at++;
      const array: unknown[] = [];
      ws();
      if (text[at] === "]") return (at++, array);
      for (;;) {
        array.push(value());
        ws();
        if (text[at++] === "]") return array;
      }
    }
    const match = /^("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at))![0];
    at += match.length;
    return /^[-\d]/.test(match) ? new Num(match) : JSON.parse(match);
  };
  return value();
}

/** An exact decimal: mantissa × 10^exponent. */
function decimal(literal: string): [bigint, number] {
  const [, sign, whole, fraction = "", exponent = "0"] = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal)!;
  return [BigInt(`${sign}${whole}${fraction}`), Number(exponent) - fraction.length];
}
function compareNumbers(a: Num, b: Num): number {
  const [ma, ea] = decimal(a.literal);
  const [mb, eb] = decimal(b.literal);
  const low = Math.min(ea, eb);
  const x = ma * 10n ** BigInt(ea - low);
  const y = mb * 10n ** BigInt(eb - low);
  return x < y ? -1 : x > y ? 1 : 0;
}

const typeRank = (value: unknown): number =>
  value === undefined
    ? 0
    : value === null
      ? 1
      : typeof value === "boolean"
        ? 2
        : value instanceof Num
          ? 3
          : typeof value === "string"
            ? 4
            : 5;

/** Kiln's order: by type (missing, null, boolean, number, string), then by value; strings by code point. */
function compareValues(a: unknown, b: unknown): number {
  const rank = typeRank(a) - typeRank(b);
  if (rank !== 0) return rank;
  if (a instanceof Num) return compareNumbers(a, b as Num);
  if (typeof a === "string") return Buffer.compare(Buffer.from(a), Buffer.from(b as string));
  if (typeof a === "boolean") return Number(a) - Number(b);
  return 0;
}
const sameType = (a: unknown, b: unknown) => typeRank(a) === typeRank(b) && !Array.isArray(a);
const range = (test: (order: number) => boolean) => (bound: unknown, owner: unknown, options: unknown) =>
  createEqualsOperation((value: unknown) => sameType(value, bound) && test(compareValues(value, bound)), owner as never, options as never);

const oracle = (filter: unknown) =>
  sift(filter as never, {
    compare: (a: unknown, b: unknown) => !Array.isArray(b) && typeRank(a) === typeRank(b) && compareValues(a, b) === 0,
    operations: {
      $gt: range((order) => order > 0),
      $gte: range((order) => order >= 0),
      $lt: range((order) => order < 0),
      $lte: range((order) => order <= 0),
      $startsWith: (prefix: unknown, owner: unknown, options: unknown) =>
        createEqualsOperation(
          (value: unknown) => typeof value === "string" && value.startsWith(prefix as string),
          owner as never,
          options as never,
        ),
    } as never,
  });

/** A filter as Kiln reads it (its text, numbers as written) and as sift reads it (dotted paths, Num values). */
interface Filter {
  text: string;
  sift: Record<string, unknown>;
}

function condition(field: string, usedTags: { done: boolean }): Filter {
  const tags = field === "/tags";
  const ops = tags
    ? ["$eq", "$in", "$exists", "$gt", "$startsWith"]
    : ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$startsWith"];
  if (tags) usedTags.done = true;
  const op = pick(ops);
  const literal = () => pick(POOLS[field]);
  let operand: string;
  if (op === "$in" || op === "$nin") operand = `[${Array.from({ length: 1 + Math.floor(rand() * 3) }, literal).join(",")}]`;
  else if (op === "$exists") operand = pick(["true", "false"]);
  else if (op === "$startsWith") operand = pick(['"a"', '"x"', '""', '"1"']);
  else operand = literal();
  const plain = op === "$eq" && rand() < 0.5;
  const text = `{${JSON.stringify(field)}:${plain ? operand : `{"${op}":${operand}}`}}`;
  const value = parse(operand);
  return { text, sift: { [field.slice(1).replaceAll("/", ".")]: plain ? { $eq: value } : { [op]: value } } };
}

function randomFilter(): Filter {
  const usedTags = { done: false };
  const fieldFor = () => (!usedTags.done && rand() < 0.25 ? "/tags" : pick(SCALAR_FIELDS));
  const parts = Array.from({ length: Math.floor(rand() * 3) }, () => condition(fieldFor(), usedTags));
  if (rand() < 0.2) {
    const field = pick(SCALAR_FIELDS);
    const branches = [condition(field, usedTags), condition(field, usedTags)];
    parts.push({ text: `{"$or":[${branches.map((b) => b.text).join(",")}]}`, sift: { $or: branches.map((b) => b.sift) } });
  }
  return {
    text: `{"$and":[${parts.map((p) => p.text).join(",") || "{}"}]}`,
    sift: { $and: parts.length ? parts.map((p) => p.sift) : [{}] },
  };
}

const valueAt = (doc: unknown, pointer: string) =>
  pointer
    .slice(1)
    .split("/")
    .reduce<unknown>(
      (node, token) =>
        node !== null && typeof node === "object" && !Array.isArray(node) ? (node as Record<string, unknown>)[token] : undefined,
      doc,
    );

test(`${QUERIES} random queries over ${DOCUMENTS} random documents equal the oracle (seed ${SEED})`, async () => {
  const { key } = await t.newAccount();
  const docs = new Map<string, unknown>();
  for (let i = 0; i < DOCUMENTS; i++) {
    const text = documentText();
    const created = await t.request("POST", "/api/v1/documents", {
      key,
      rawBody: `{"name":"p${i}","folder":"${i % 3 === 0 ? "p/sub" : "p"}","content":${text}}`,
      headers: { "content-type": "application/json" },
    });
    expect(created.status).toBe(201);
    docs.set(((await created.json()) as { document: { id: string } }).document.id, parse(text));
  }
  let indexesMade = 0;
  for (let q = 0; q < QUERIES; q++) {
    const filter = randomFilter();
    const sort = SCALAR_FIELDS.filter(() => rand() < 0.3).map((path) => ({ path, order: pick(["asc", "desc"] as const) }));
    const limit = 1 + Math.floor(rand() * 7);
    const body = (cursor?: string) =>
      `{"folder":"p","filter":${filter.text},"sort":${JSON.stringify(sort)},"limit":${limit}${cursor ? `,"cursor":${JSON.stringify(cursor)}` : ""}}`;
    const ask = async (cursor?: string) => {
      const response = await t.request("POST", "/api/v1/documents/query", {
        key,
        rawBody: body(cursor),
        headers: { "content-type": "application/json" },
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    let first = await ask();
    if (first.status === 400 && first.body.code === "query_needs_index") {
      // a query naming no field is served by any index of the folder: with none, the suggestion names no field
      const suggested = first.body.suggestedIndex.fields.length ? first.body.suggestedIndex : { folder: "p", fields: [{ path: "/a" }] };
      const made = await t.json("POST", "/api/v1/indexes", { key, body: suggested });
      expect([202, 409]).toContain(made.status);
      indexesMade++;
      await buildNow(t);
      first = await ask();
    }
    if (first.status !== 200) throw new Error(`query ${body()} answered ${first.status} ${JSON.stringify(first.body)}`);
    const seen: string[] = [];
    let page = first;
    for (;;) {
      seen.push(...page.body.documents.map((d: { id: string }) => d.id));
      if (!page.body.nextCursor) break;
      page = await ask(page.body.nextCursor);
      expect(page.status).toBe(200);
    }
    const test = oracle(filter.sift);
    const expected = [...docs].filter(([, doc]) => test(doc)).map(([id]) => id);
    const context = `query ${body()}`;
    expect(new Set(seen).size, context).toBe(seen.length);
    expect([...seen].sort(), context).toEqual(expected.sort());
    for (let i = 1; i < seen.length; i++) {
      const [before, after] = [docs.get(seen[i - 1]), docs.get(seen[i])];
      for (const field of sort) {
        const order = compareValues(valueAt(before, field.path), valueAt(after, field.path)) * (field.order === "desc" ? -1 : 1);
        if (order !== 0) {
          expect(order, `${context}: ${seen[i - 1]} before ${seen[i]}`).toBeLessThan(0);
          break;
        }
      }
    }
  }
  console.log(`query property: ${QUERIES} queries, ${indexesMade} indexes made from suggestedIndex`);
}, 300_000);
