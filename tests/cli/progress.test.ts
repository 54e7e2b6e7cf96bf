/**
 * Progress bars as a person sees them: the CLI runs inside tmux (a real terminal) and the screen is
 * captured. Outside a terminal (the other tests' pipes) nothing but the data and messages is printed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRunServer, type RunServer } from "../reliability/support/run-server";
import { KILN_BIN_DIR, kiln, type Target } from "./support";

let run: RunServer;
let user: Target;
let work: string;
const socket = `kiln-cli-test-${process.pid}`;
const BIG = JSON.stringify(Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ["a", "b"], value: i * 1.5 })));

beforeAll(async () => {
  run = await startRunServer();
  user = { url: run.server.url, key: await run.newKey(["documents"]) };
  work = mkdtempSync(join(tmpdir(), "kiln-cli-tty-"));
  writeFileSync(join(work, "big.json"), BIG);
});
afterAll(async () => {
  Bun.spawnSync(["tmux", "-L", socket, "kill-server"]);
  await run.close();
  rmSync(work, { recursive: true, force: true });
});

/** Runs a shell command in a fresh tmux window and returns the screen once it has finished. */
async function onTerminal(name: string, command: string): Promise<string> {
  const env = [`KILN_URL=${user.url}`, `KILN_KEY=${user.key}`].flatMap((pair) => ["-e", pair]);
  // PATH is set in the command itself: a login shell's profile would reset it.
  const script = `export PATH=${KILN_BIN_DIR}:$PATH; ${command}; echo EXIT=$?; sleep 600`;
  const started = Bun.spawnSync(["tmux", "-L", socket, "new-session", "-d", "-s", name, "-x", "150", "-y", "20", "-c", work, ...env, script]);
  expect(started.exitCode).toBe(0);
  for (let tries = 0; tries < 600; tries++) {
    const screen = Bun.spawnSync(["tmux", "-L", socket, "capture-pane", "-p", "-t", name]).stdout.toString();
    if (/EXIT=\d+/.test(screen)) return screen;
    await Bun.sleep(100);
  }
  throw new Error(`${command} did not finish on the terminal`);
}

test("push and pull draw a bar that reaches 100% on a terminal", async () => {
  const size = (BIG.length / 1024 / 1024).toFixed(1);
  const pushed = await onTerminal("push", "kiln docs push big.json");
  expect(pushed).toContain("EXIT=0");
  expect(pushed).toMatch(new RegExp(`push \\[█+\\] 100% ${size} MiB/${size} MiB`));
  const id = /(doc_[0-9a-f-]+)\s+big\.json/.exec(pushed)?.[1];
  expect(id).toBeDefined();

  const pulled = await onTerminal("pull", `kiln docs pull ${id} -o copy.json`);
  expect(pulled).toContain("EXIT=0");
  expect(pulled).toMatch(new RegExp(`pull ${id} \\[█+\\] 100% ${size} MiB/${size} MiB`));
  expect(readFileSync(join(work, "copy.json"), "utf8")).toBe(BIG);
});

test("no bar when the data itself goes to the terminal, nor when stderr is not a terminal", async () => {
  const small = await kiln(["--json", "docs", "push", "--name", "small.json", "-"], user, { stdin: "[1]" });
  const id = JSON.parse(small.stdout).id;
  const screen = await onTerminal("pull-to-screen", `kiln docs pull ${id}`);
  expect(screen).toContain("[1]");
  expect(screen).not.toContain("100%");

  const piped = await kiln(["docs", "push", join(work, "big.json")], user);
  expect(piped.code).toBe(0);
  expect(piped.stderr).toBe("");
});
