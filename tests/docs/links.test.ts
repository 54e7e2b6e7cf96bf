/**
 * The README and docs/ stand alone: every relative link resolves to a file of the repository, nothing
 * points outside it (no ../ paths), and every environment variable Kiln or its tests read is documented.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");
const files = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

describe("README.md and docs/", () => {
  test("every relative link resolves inside the repository", () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target)) continue;
        const path = resolve(dirname(join(root, file)), target.split("#")[0]);
        if (!path.startsWith(root + "/") || !existsSync(path)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("nothing refers to files outside the repository", () => {
    for (const file of files) expect([file, readFileSync(join(root, file), "utf8").includes("../shared")]).toEqual([file, false]);
  });

  test("docs/configuration.md documents every environment variable of src/config.ts", () => {
    const source = readFileSync(join(root, "src/config.ts"), "utf8");
    const names = new Set(
      [...source.matchAll(/env\.([A-Z][A-Z0-9_]+)/g), ...source.matchAll(/"([A-Z][A-Z0-9_]+)"/g)].map((match) => match[1]),
    );
    const documented = readFileSync(join(root, "docs/configuration.md"), "utf8");
    expect([...names].filter((name) => !documented.includes(`\`${name}\``))).toEqual([]);
    expect(names.size).toBeGreaterThan(10);
  });

  test("docs/development.md documents every environment variable the tests read", () => {
    const names = new Set<string>();
    for (const file of new Bun.Glob("tests/**/*.ts").scanSync(root)) {
      for (const [, name] of readFileSync(join(root, file), "utf8").matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)) names.add(name);
    }
    for (const system of ["PATH", "HOME"]) names.delete(system);
    const documented = readFileSync(join(root, "docs/development.md"), "utf8");
    expect([...names].filter((name) => !documented.includes(`\`${name}\``))).toEqual([]);
    expect(names.size).toBeGreaterThan(10);
  });
});
