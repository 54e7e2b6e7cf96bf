/**
 * Claims of the README and docs/ that the server's behaviour decides, held to it: every curl command
 * that sends a body says its Content-Type (curl -d alone sends a form type, which is 415), and every
 * statement of the order of checks says 401 → 429 → 403, as src/modules/auth/index.ts decides (the
 * behaviour itself: tests/http/rate-limit.test.ts and tests/http/http-details.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");
const files = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const read = (file: string) => readFileSync(join(root, file), "utf8");

/** Each curl command of a file, its continuation lines joined. */
function curlCommands(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .flatMap((line) => line.split(/(?=\bcurl\s)/).filter((part) => part.startsWith("curl ")));
}

describe("request bodies in the docs", () => {
  test("every curl command that sends a body names its Content-Type or uses --json", () => {
    const untyped: string[] = [];
    let withBody = 0;
    for (const file of files) {
      for (const command of curlCommands(read(file))) {
        if (!/\s(-d|--data|--data-binary|--data-raw|--json)[\s=]/.test(command)) continue;
        withBody++;
        if (!/-H\s+["']content-type:/i.test(command) && !/\s--json\s/.test(command)) untyped.push(`${file}: ${command}`);
      }
    }
    expect(withBody).toBeGreaterThan(10);
    expect(untyped).toEqual([]);
  });

  test("no page says that curl sends JSON without a header", () => {
    for (const file of files) {
      const claims = read(file)
        .replace(/\n\s*/g, " ")
        .match(/curl[^;)]{0,60}without (a header|`-H`)[^.;]{0,20}works|works without a header/g);
      expect([file, claims]).toEqual([file, null]);
    }
  });
});

describe("the order of checks in the docs", () => {
  test("api.md states 401 → 429 → 403 → 404 → 400", () => {
    expect(read("docs/api.md")).toContain("401 (key) → 429 (rate limit) → 403 (permission) → 404 (the resource) → 400");
  });

  test("wherever a page orders 403 and 429 (or 401 and 403), 401 comes first and 429 before 403", () => {
    const wrong: string[] = [];
    for (const file of files) {
      for (const line of read(file).split("\n")) {
        if (!/→/.test(line) || !line.includes("403")) continue;
        const at = (status: string) => line.indexOf(status);
        if ((line.includes("429") && at("429") > at("403")) || (line.includes("401") && at("401") > at("403")))
          wrong.push(`${file}: ${line}`);
      }
      // "401/403 (key, permission, rate limit 429)" put the permission before the rate limit
      if (/401\/403 \(key, permission, rate limit/.test(read(file))) wrong.push(`${file}: 401/403 (key, permission, rate limit 429)`);
    }
    expect(wrong).toEqual([]);
  });
});
