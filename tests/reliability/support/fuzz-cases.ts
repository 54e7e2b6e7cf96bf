/**
 * fast-check arbitraries for hostile requests: random and mutated bodies, headers, query strings and
 * paths over every endpoint of ENDPOINTS. A case is plain data (printable when it fails).
 */
import fc from "fast-check";
import { ENDPOINTS, type Endpoint } from "./endpoints";

export interface FuzzCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface FuzzTargets {
  key: string;
  /** ids of documents, accounts and keys the fuzzer may aim at (its own and another account's) */
  ids: readonly string[];
  utilityIds: readonly string[];
  /** request bodies above this size run in a worker thread */
  inlineMaxBytes: number;
}

/** Strings anywhere in the Unicode range, control characters and lone surrogates included. */
const anyText = (maxLength = 40) => fc.string({ unit: "binary", maxLength });
const controlText = fc
  .array(
    fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)),
    { minLength: 1, maxLength: 4 },
  )
  .map((chars) => `a${chars.join("")}b`);
const hostileText = fc.oneof(
  anyText(),
  controlText,
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\ud800",
    "\udfff",
    "a/../b",
    "../../etc/passwd",
    "//a///b//",
    ".",
    "..",
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "=cmd|' /C calc'!A0",
    '"; filename=evil.exe',
    "\r\nSet-Cookie: x=1",
    "x".repeat(101),
    "y".repeat(300),
    "é".repeat(100),
  ),
);

const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 1, 200, 201, 2 ** 31, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e308, 5e-324),
);

/** Any JSON value, with hostile strings and numbers inside. */
const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    hostileNumber,
    hostileText,
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(hostileText, tie("value"), { maxKeys: 5 }),
  ),
})).value;

/** JSON text fragments that JSON.stringify cannot produce: huge numbers, lone surrogates, pollution keys. */
const rawJsonValue = fc.oneof(
  hostileJson.map((value) => JSON.stringify(value) ?? "null"),
  fc.constantFrom(
    "1e400",
    "-1e400",
    "123456789012345678901234567890",
    "-0",
    "1.0",
    '"\\ud800"',
    '"\\u0000"',
    '{"__proto__":{"kilnPolluted":"yes"}}',
    '{"constructor":{"prototype":{"kilnPolluted":"yes"}}}',
    '[{"__proto__":{"kilnPolluted":"yes"}}]',
  ),
);

const mutation = (valid: Record<string, unknown>) => {
  const fields = Object.keys(valid);
  const field = fields.length > 0 ? fc.constantFrom(...fields) : hostileText;
  return fc.oneof(
    // a field replaced by any value
    fc.tuple(field, rawJsonValue).map(([name, value]) => withRaw(valid, name, value)),
    // an unknown or pollution field added
    fc
      .tuple(fc.oneof(hostileText, fc.constantFrom("__proto__", "constructor", "prototype", "id", "fileSize", "accountId")), rawJsonValue)
      .map(([name, value]) => withRaw(valid, name, value)),
    // a field dropped
    field.map((name) => JSON.stringify(Object.fromEntries(Object.entries(valid).filter(([key]) => key !== name)))),
    // a duplicate key: the second one wins in JSON.parse
    fc
      .tuple(field, rawJsonValue)
      .map(([name, value]) => `${JSON.stringify(valid).slice(0, -1)}${fields.length ? "," : ""}${JSON.stringify(name)}:${value}}`),
    // nested pollution inside every object-valued field
    fc.constant(
      JSON.stringify(valid)
        .replaceAll("{", '{"__proto__":{"kilnPolluted":"yes"},"constructor":{"prototype":{"kilnPolluted":"yes"}},')
        .replaceAll(",}", "}"),
    ),
  );
};

function withRaw(valid: Record<string, unknown>, name: string, rawValue: string): string {
  const others = Object.entries(valid)
    .filter(([key]) => key !== name)
    .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`);
  return `{${[...others, `${JSON.stringify(name)}:${rawValue}`].join(",")}}`;
}

const deepNesting = fc
  .tuple(fc.constantFrom(2, 100, 9_999, 10_001, 50_000), fc.constantFrom("[", '{"a":'), fc.boolean())
  .map(([depth, open, balanced]) => open.repeat(depth) + "1" + (balanced ? (open === "[" ? "]" : "}").repeat(depth) : ""));

const invalidUtf8 = fc
  .tuple(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.constantFrom('{"name":"', '{"inputs":{"primary":"', ""))
  .map(([bytes, prefix]) => {
    const head = new TextEncoder().encode(prefix);
    const out = new Uint8Array(head.length + bytes.length + 2);
    out.set(head);
    out.set(
      bytes.map((byte) => byte | 0x80),
      head.length,
    );
    out.set([0x22, 0x7d], head.length + bytes.length);
    return out;
  });

function bodyFor(endpoint: Endpoint, targets: FuzzTargets): fc.Arbitrary<string | Uint8Array | undefined> {
  const valid = endpoint.validBody?.() as Record<string, unknown> | undefined;
  const options: fc.Arbitrary<string | Uint8Array | undefined>[] = [
    fc.constant(undefined),
    fc.constant(""),
    rawJsonValue,
    deepNesting,
    invalidUtf8,
    fc.string({ maxLength: 30 }),
  ];
  if (valid) {
    options.push(fc.constant(JSON.stringify(valid)), mutation(valid), mutation(valid));
    // the same bodies padded with whitespace past the inline limit: they run in a worker thread
    options.push(mutation(valid).map((text) => text + " ".repeat(targets.inlineMaxBytes + 1)));
  }
  return fc.oneof(...options);
}

const idSegment = (targets: FuzzTargets) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...targets.ids) },
    { weight: 2, arbitrary: hostileText.map(percentEncode) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "%00",
        "%FF%FE",
        "..%2F..%2Fetc",
        "%2e%2e",
        "doc_00000000-0000-7000-8000-000000000000",
        "a".repeat(5000),
        "__proto__",
        "constructor",
      ),
    },
  );

const utilitySegment = (targets: FuzzTargets) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...targets.utilityIds) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("nope.nothing", "__proto__", "constructor", "toString", "hasOwnProperty", "convert.", ".", "%00"),
    },
    { weight: 1, arbitrary: hostileText.map(percentEncode) },
  );

/** Lone surrogates cannot be percent-encoded: they travel as U+FFFD (invalid UTF-8 comes from %FF cases). */
const percentEncode = (text: string) => encodeURIComponent(text.toWellFormed());

const BOGUS_CURSORS = [
  "",
  "!!!",
  "a".repeat(600),
  Buffer.from("[1]").toString("base64url"),
  Buffer.from('[1,"x",1,"doc_1"]').toString("base64url"),
  Buffer.from('{"__proto__":{"kilnPolluted":"yes"}}').toString("base64url"),
  Buffer.from('[1,"tag",-5,"doc_00000000-0000-7000-8000-000000000000"]').toString("base64url"),
  Buffer.from("not json at all").toString("base64url"),
  "%FF%FE",
  "null",
  "[]",
];

const queryValue = fc.oneof(
  hostileNumber.map(String),
  hostileText.map(percentEncode),
  fc.constantFrom(...BOGUS_CURSORS.map(encodeURIComponent), "%FF", "%00", "true", "false", "1e3", "1.5", "NaN", "Infinity", "[]", "%5B%5D"),
);

const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          "limit",
          "cursor",
          "folder",
          "deleted",
          "accountId",
          "access_token",
          "api_key",
          "__proto__",
          "constructor[prototype][x]",
        ),
        hostileText.map(percentEncode),
      ),
      queryValue,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length ? "?" + pairs.map(([key, value]) => `${key}=${value}`).join("&") : ""));

const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 60 });

function headersFor(targets: FuzzTargets): fc.Arbitrary<Record<string, string>> {
  const authorization = fc.oneof(
    { weight: 10, arbitrary: fc.constant(`Bearer ${targets.key}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        "",
        "Bearer",
        "Bearer ",
        `bearer ${targets.key}`,
        `Basic ${targets.key}`,
        `Bearer  ${targets.key}`,
        `Bearer ${targets.key}x`,
        `Bearer ${"k".repeat(10_000)}`,
      ),
    },
    { weight: 1, arbitrary: headerText.map((text) => `Bearer ${text}`) },
  );
  const contentType = fc.constantFrom(
    undefined,
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "multipart/form-data; boundary=x",
    "application/x-www-form-urlencoded",
    "application/json; charset=latin1",
    "garbage/\u00ff",
    "application/json-patch+json",
    "application/merge-patch+json",
  );
  const contentLength = fc.constantFrom(undefined, undefined, undefined, "99999999999999", "0", "1", "-1", "abc", "1e3");
  return fc
    .record({
      authorization,
      "content-type": contentType,
      "content-length": contentLength,
      "x-request-id": fc.option(headerText, { freq: 4 }),
      "if-match": fc.option(fc.oneof(headerText, fc.constant("*")), { freq: 6 }),
      "if-none-match": fc.option(fc.oneof(headerText, fc.constant("*")), { freq: 6 }),
    })
    .map((headers) =>
      Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === "string")),
    );
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/** One hostile request against one endpoint (or a mutated path of it). */
export function fuzzCase(targets: FuzzTargets): fc.Arbitrary<FuzzCase> {
  return fc.constantFrom(...ENDPOINTS).chain((endpoint) =>
    fc
      .record({
        method: fc.oneof({ weight: 6, arbitrary: fc.constant(endpoint.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        id: idSegment(targets),
        utilityId: utilitySegment(targets),
        pathMutation: fc.constantFrom("", "", "", "", "/", "//", "/extra", "/%00", "/..", "?"),
        query: queryString,
        headers: headersFor(targets),
        body: bodyFor(endpoint, targets),
      })
      .map(({ method, id, utilityId, pathMutation, query, headers, body }) => ({
        method,
        path: endpoint.path.replace(":id", id).replace(":utilityId", utilityId) + pathMutation + query,
        headers,
        body: method === "GET" || method === "HEAD" ? undefined : body,
      })),
  );
}
