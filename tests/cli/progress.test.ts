/**
 * Progress bars as a person sees them: the CLI runs inside tmux (a real terminal) and the screen is
 * captured. Outside a terminal (the other tests' pipes) nothing but the data and messages is printed.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunServer, startRunServer } from "../reliability/support/run-server";
import { kiln, noTerminal, onTerminal, stopTerminals, type Target } from "./support";

// Hooks and tests start real servers (an embedded PostgreSQL each): slow on a loaded machine.
setDefaultTimeout(60_000);

let run: RunServer;
let user: Target;
let work: string;
if (noTerminal) console.log(`progress: the terminal tests are skipped: ${noTerminal}`);
const BIG = JSON.stringify(Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ["a", "b"], value: i * 1.5 })));

beforeAll(async () => {
  run = await startRunServer();
  user = { url: run.server.url, key: await run.newKey(["documents"]) };
  work = mkdtempSync(join(tmpdir(), "kiln-cli-tty-"));
  writeFileSync(join(work, "big.json"), BIG);
});
afterAll(async () => {
  stopTerminals();
  await run.close();
  rmSync(work, { recursive: true, force: true });
});

test.skipIf(noTerminal !== undefined)("push and pull draw a bar that reaches 100% on a terminal", async () => {
  const size = Number((BIG.length / 1e6).toFixed(1));
  const pushed = await onTerminal(user, work, "push", "kiln docs push big.json");
  expect(pushed).toContain("EXIT=0");
  expect(pushed).toMatch(new RegExp(`push \\[█+\\] 100% ${size} MB/${size} MB`));
  const id = /(doc_[0-9a-f-]+)\s+big\.json/.exec(pushed)?.[1];
  expect(id).toBeDefined();

  const pulled = await onTerminal(user, work, "pull", `kiln docs pull ${id} -o copy.json`);
  expect(pulled).toContain("EXIT=0");
  expect(pulled).toMatch(new RegExp(`pull ${id} \\[█+\\] 100% ${size} MB/${size} MB`));
  expect(readFileSync(join(work, "copy.json"), "utf8")).toBe(BIG);
});

test.skipIf(noTerminal !== undefined)("no bar when the data itself goes to the terminal, nor when stderr is not a terminal", async () => {
  const small = await kiln(["--json", "docs", "push", "--name", "small.json", "-"], user, { stdin: "[1]" });
  const id = JSON.parse(small.stdout).id;
  const screen = await onTerminal(user, work, "pull-to-screen", `kiln docs pull ${id}`);
  expect(screen).toContain("[1]");
  expect(screen).not.toContain("100%");

  const piped = await kiln(["docs", "push", join(work, "big.json")], user);
  expect(piped.code).toBe(0);
  expect(piped.stderr).toBe("");
});
