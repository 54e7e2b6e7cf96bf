/**
 * The error catalogue (src/core/error-codes.ts) is the one list of problems: what the API documents and
 * what the code throws both come from it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ERRORS, problems, STATUS_TITLES } from "../../src/core/error-codes";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
let document: any;
beforeAll(async () => {
  t = await createTestApp();
  document = await (await t.request("GET", "/openapi.json", { key: null })).json();
});
afterAll(async () => {
  await t.close();
});

const entries = Object.values(ERRORS);

test("each entry is one code at one status, with the status's reason phrase as title and a meaning", () => {
  const pairs = entries.map((entry) => `${entry.status} ${entry.code}`);
  expect(pairs.filter((pair, index) => pairs.indexOf(pair) !== index)).toEqual([]);
  for (const entry of entries) {
    expect(entry.code).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(entry.title).toBe(STATUS_TITLES[entry.status]);
    expect(entry.meaning.length).toBeGreaterThan(5);
  }
});

test("every code a problem response of the OpenAPI document lists is a catalogue entry of that status", () => {
  const listed: string[] = [];
  for (const item of Object.values<any>(document.paths))
    for (const operation of Object.values<any>(item))
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        const codes: string[] = response.content?.["application/problem+json"]?.schema?.allOf?.[1]?.properties?.code?.enum ?? [];
        for (const code of codes) listed.push(`${status} ${code}`);
      }
  const known = new Set(entries.map((entry) => `${entry.status} ${entry.code}`));
  expect(listed.length).toBeGreaterThan(200);
  expect([...new Set(listed)].filter((pair) => !known.has(pair))).toEqual([]);
});

test("problems`…` reads each entry as its code and lists the codes once, in order", () => {
  const prose = problems`${ERRORS.not_ready}: down; ${ERRORS.draining}: shutting down, unlike ${ERRORS.not_ready}`;
  expect(prose).toEqual({ codes: ["not_ready", "draining"], description: "not_ready: down; draining: shutting down, unlike not_ready" });
});

test("no throw site in src spells a code: each builds its error from a catalogue entry", () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
    );
  const literal = /new HttpError\(\s*\d{3},\s*"[a-z0-9_]+"|\b(?:badRequest|notFound)\(\s*"[a-z0-9_]+"/g;
  const found = sources(join(import.meta.dir, "../../src")).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(literal)].map((match) => `${file}: ${match[0]}`),
  );
  expect(found).toEqual([]);
});
