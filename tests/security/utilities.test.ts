/**
 * Security checks over HTTP (issue 8 §6): Content-Disposition injection, CSV formula injection,
 * prototype pollution through every utility (inline and in workers), ReDoS patterns in every place a
 * user regex goes, and expression sandbox escapes through the utilities the expression table
 * (tests/security/expressions.test.ts) does not drive, inline and in a worker.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { UTILITIES } from "../../src/utilities/registry";
import { registry as probeRegistry, prototypeReport } from "../reliability/fixtures/probe-registry";
import { answerViolations } from "../reliability/support/problem";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
let key: string;
const clean = prototypeReport();
const canary = globalThis as { pwned?: unknown };

beforeAll(async () => {
  // a short limit: a pattern that stalled a worker would answer 408 instead of hanging the suite
  t = await createTestApp({ UTILITY_TIMEOUT_MS: "5000" }, { utilityRegistry: probeRegistry });
  key = (await t.newAccount({ permissions: ["documents", "utilities"], rateLimitPerMinute: null })).key;
});
afterAll(async () => {
  await t.close();
});

/** Runs a utility inline, or in a worker (the same JSON padded with whitespace past the inline limit). */
async function run(utilityId: string, body: unknown, where: "inline" | "worker" = "inline") {
  const text =
    (typeof body === "string" ? body : JSON.stringify(body)) + (where === "worker" ? " ".repeat(t.config.utilityInlineMaxBytes + 1) : "");
  const response = await t.request("POST", `/api/v1/utilities/${utilityId}`, { key, rawBody: text });
  const answer = await response.text();
  expect(answerViolations(response.status, response.headers, answer)).toEqual([]);
  return { status: response.status, body: JSON.parse(answer) };
}

describe("Content-Disposition carries any name safely", () => {
  const NAMES = [
    'evil"; filename="evil.exe',
    "back\\slash.json",
    "semi;colon=1.json",
    "per%20cent.json",
    "Café Ü.json",
    "日本語.json",
    "emoji 🎉.json",
    "quote'single.json",
    "space  tab.json",
    "<script>alert(1)</script>.json",
    "a".repeat(100),
  ];
  const SAFE = /^attachment; filename="([\x20-\x21\x23-\x5b\x5d-\x7e]*)"(?:; filename\*=UTF-8''([A-Za-z0-9!#$&+.^_`|~%-]+))?$/;

  test.each(NAMES)("%s", async (name) => {
    const created = await t.json("POST", "/api/v1/documents", { key, body: { name, content: { a: 1 } } });
    expect(created.status).toBe(201);
    const download = await t.request("GET", `/api/v1/documents/${created.body.document.id}/content`, { key });
    expect(download.status).toBe(200);
    const header = download.headers.get("content-disposition")!;
    const match = SAFE.exec(header);
    expect(match).not.toBeNull();
    expect(match![2] !== undefined ? decodeURIComponent(match![2]) : match![1]).toBe(name);
  });

  test("names with control characters (header splitting) are refused with 400", async () => {
    for (const name of ["a\r\nSet-Cookie: x=1", "a\nb", "a\u0000b", "tab\there"]) {
      const created = await t.json("POST", "/api/v1/documents", { key, body: { name, content: 1 } });
      expect({ name, status: created.status }).toEqual({ name, status: 400 });
    }
  });
});

describe("CSV formula injection", () => {
  const FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A2)", "\tTAB", "\rCR", '=HYPERLINK("http://evil","x")'];

  for (const where of ["inline", "worker"] as const) {
    test(`json-to-csv (${where}) prefixes every formula-like cell with '`, async () => {
      const rows = FORMULAS.map((value, i) => ({ id: i, value }));
      const answer = await run("convert.json-to-csv", { inputs: { primary: rows } }, where);
      expect(answer.status).toBe(200);
      const parsed = await run("convert.csv-to-json", { inputs: { primary: answer.body.output } });
      expect(parsed.status).toBe(200);
      const cells = (parsed.body.output as { value: unknown }[]).map((row) => String(row.value));
      expect(cells).toEqual(FORMULAS.map((formula) => `'${formula}`));
    });
  }

  test("a formula-like column name is escaped too", async () => {
    const answer = await run("convert.json-to-csv", { inputs: { primary: [{ "=1+1": "x", "@cmd": "y" }] } });
    expect(answer.status).toBe(200);
    const header = (answer.body.output as string).split("\n")[0];
    for (const cell of header.split(",")) expect(cell.replace(/^"/, "")).not.toMatch(/^[=+\-@\t\r]/);
  });

  test("escapeFormulas: false writes them raw (the check above can fail)", async () => {
    const answer = await run("convert.json-to-csv", { inputs: { primary: [{ value: "=1+1" }] }, config: { escapeFormulas: false } });
    expect(answer.body.output).toContain("\n=1+1");
  });
});

describe("prototype pollution through every utility", () => {
  const POLLUTERS = [
    '{"__proto__":{"kilnPolluted":"yes"},"a":{"__proto__":{"kilnPolluted":"yes"}}}',
    '{"constructor":{"prototype":{"kilnPolluted":"yes"}},"b":[{"constructor":{"prototype":{"kilnPolluted":"yes"}}}]}',
    '[{"__proto__":{"kilnPolluted":"yes"},"x":1},{"constructor":{"prototype":{"kilnPolluted":"yes"}},"x":2}]',
  ];
  const ids = UTILITIES.map((utility) => utility.id);

  test.each(ids)("%s: hostile keys in inputs and config, inline and in a worker", async (id) => {
    for (const where of ["inline", "worker"] as const) {
      for (const polluter of POLLUTERS) {
        await run(id, `{"inputs":{"primary":${polluter},"secondary":${polluter}}}`, where);
        await run(id, `{"inputs":{"primary":${polluter}},"config":{"__proto__":{"kilnPolluted":"yes"}}}`, where);
      }
    }
    expect(prototypeReport()).toEqual(clean);
  });

  test("afterwards no worker and not the server has a polluted prototype", async () => {
    expect(prototypeReport()).toEqual(clean);
    for (const where of ["inline", ...Array(t.config.utilityWorkers * 3).fill("worker")] as ("inline" | "worker")[]) {
      const answer = await run("probe.prototype", { inputs: { primary: null } }, where);
      expect(answer.body.output).toEqual(clean);
    }
  });
});

describe("ReDoS: user regular expressions run in linear time", () => {
  const EVIL: [pattern: string, input: string][] = [
    ["(a+)+$", "a".repeat(50_000) + "!"],
    ["(a|a)*$", "a".repeat(50_000) + "!"],
    ["(a|aa)+$", "a".repeat(50_000) + "!"],
    ["^(([a-z])+.)+[A-Z]([a-z])+$", "abcdefghij".repeat(5_000) + "!"],
    ["(.*a){25}", "a".repeat(20_000)],
    ["(x+x+)+y", "x".repeat(50_000)],
  ];

  // Under a backtracking engine each of these runs for longer than the age of the universe: the worker
  // would hit the 5 s limit (408), an inline run would hang the process. Linear time answers 200.
  test.each(EVIL)("%s over a hostile input: find-replace, redact and filter answer 200", async (pattern, input) => {
    const findReplace = await run(
      "structure.find-replace",
      { inputs: { primary: { text: input } }, config: { search: pattern, replacement: "X", regex: true } },
      "worker",
    );
    expect(findReplace.status).toBe(200);
    const redact = await run("cleanup.redact", { inputs: { primary: { text: input } }, config: { customPatterns: [pattern] } }, "worker");
    expect(redact.status).toBe(200);
    const filter = await run(
      "generate.filter",
      { inputs: { primary: [{ text: input }] }, config: { where: [{ field: "text", op: "regex", value: pattern }] } },
      "worker",
    );
    expect(filter.status).toBe(200);
    const small = await run("structure.find-replace", {
      inputs: { primary: { text: input.slice(0, 40) } },
      config: { search: pattern, replacement: "X", regex: true },
    });
    expect(small.status).toBe(200);
  });

  test("patterns the linear engine cannot run (backreferences, lookaround) are a 400 naming the field", async () => {
    for (const pattern of ["(a)\\1", "(?=a)a", "(?<=a)b", "a{2,1}", "(unclosed"]) {
      const findReplace = await run("structure.find-replace", {
        inputs: { primary: { text: "aa" } },
        config: { search: pattern, regex: true },
      });
      expect({ pattern, status: findReplace.status }).toEqual({ pattern, status: 400 });
      const redact = await run("cleanup.redact", { inputs: { primary: { text: "aa" } }, config: { customPatterns: [pattern] } });
      expect({ pattern, status: redact.status }).toEqual({ pattern, status: 400 });
    }
  });
});

describe("expression sandbox escapes through restructure and find-replace templates", () => {
  const ESCAPES = [
    '"".constructor.constructor("globalThis.pwned = true")()',
    "old.constructor.constructor('globalThis.pwned = 1')()",
    "$.__proto__",
    "process.exit(1)",
    "Bun.spawnSync(['touch','/tmp/kiln-pwned'])",
    "globalThis.pwned = 1",
    "require('fs')",
    "this.constructor",
    "import('fs')",
    "old.toString.call.constructor",
  ];

  for (const where of ["inline", "worker"] as const) {
    test(`every escape is refused with 400 (${where}), and nothing ran`, async () => {
      for (const source of ESCAPES) {
        const restructured = await run(
          "structure.restructure",
          { inputs: { primary: { a: 1 } }, config: { template: { x: `{{ ${source} }}` } } },
          where,
        );
        expect({ source, status: restructured.status }).toEqual({ source, status: 400 });
        const replaced = await run(
          "structure.find-replace",
          { inputs: { primary: { a: "aaa" } }, config: { search: "a", replacement: `{{ ${source} }}` } },
          where,
        );
        expect({ source, status: replaced.status }).toEqual({ source, status: 400 });
      }
      expect(canary.pwned).toBeUndefined();
      expect(await Bun.file("/tmp/kiln-pwned").exists()).toBe(false);
      expect((await run("probe.prototype", { inputs: { primary: null } }, where)).body.output).toEqual(clean);
    });
  }
});
