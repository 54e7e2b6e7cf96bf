/** Runs the real `kiln` CLI as a subprocess, the way a user would. */
import { afterAll, beforeAll } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type RunServer, startRunServer } from "../reliability/support/run-server";

export const CLI = resolve(import.meta.dir, "../../src/cli/index.ts");

/** A folder holding a `kiln` executable (bun + the CLI), to put first on the PATH of shell scripts. */
export const KILN_BIN_DIR = (() => {
  const dir = mkdtempSync(join(tmpdir(), "kiln-cli-bin-"));
  writeFileSync(join(dir, "kiln"), `#!/bin/sh\nexec bun ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(join(dir, "kiln"), 0o755);
  return dir;
})();

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Target {
  url: string;
  key?: string;
}

/**
 * A user of a real server that the file's tests share: started before them, closed after. The target
 * is filled in by then, so tests pass it as it is.
 */
export function realServerUser(permissions: string[]): Required<Target> {
  const user = { url: "", key: "" };
  let run: RunServer | undefined;
  beforeAll(async () => {
    run = await startRunServer();
    user.url = run.server.url;
    user.key = await run.newKey(permissions);
  });
  afterAll(async () => {
    await run?.close();
  });
  return user;
}

function environment(target: Target, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    KILN_URL: target.url,
    PATH: `${KILN_BIN_DIR}:${process.env.PATH}`,
    ...extra,
  };
  if (target.key === undefined) delete env.KILN_KEY;
  else env.KILN_KEY = target.key;
  return env;
}

async function collect(proc: Bun.Subprocess<any, "pipe", "pipe">): Promise<CliResult> {
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

export function kiln(
  args: string[],
  target: Target,
  options: { stdin?: string | Uint8Array; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const stdin = typeof options.stdin === "string" ? new TextEncoder().encode(options.stdin) : options.stdin;
  return collect(
    Bun.spawn(["bun", CLI, ...args], { env: environment(target, options.env), stdin: stdin ?? "ignore", stdout: "pipe", stderr: "pipe" }),
  );
}

/** A bash script (pipefail) with `kiln` on the PATH, run in `cwd`. */
export function shell(script: string, target: Target, cwd?: string): Promise<CliResult> {
  return collect(
    Bun.spawn(["bash", "-o", "pipefail", "-c", script], { cwd, env: environment(target), stdin: "ignore", stdout: "pipe", stderr: "pipe" }),
  );
}

const TMUX_SOCKET = `kiln-cli-test-${process.pid}`;

/** Why onTerminal cannot run on this machine, or undefined: its tests are skipped then, saying this. */
export const noTerminal = Bun.which("tmux") ? undefined : "tmux is not on PATH (apt-get install -y tmux)";
let sessions = 0;

/**
 * Runs a shell command in a fresh tmux session (a real terminal, 150×20) in `cwd` and returns the screen
 * once it has finished, with a last line `EXIT=<code>`. stopTerminals() ends the tmux server.
 */
export async function onTerminal(target: Target, cwd: string, name: string, command: string): Promise<string> {
  const session = `${name}-${sessions++}`;
  const env = [`KILN_URL=${target.url}`, `KILN_KEY=${target.key ?? ""}`].flatMap((pair) => ["-e", pair]);
  // PATH is set in the command itself: a login shell's profile would reset it.
  const script = `export PATH=${KILN_BIN_DIR}:$PATH; ${command}; echo EXIT=$?; sleep 600`;
  const started = Bun.spawnSync([
    "tmux",
    "-L",
    TMUX_SOCKET,
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    "150",
    "-y",
    "20",
    "-c",
    cwd,
    ...env,
    script,
  ]);
  if (started.exitCode !== 0) throw new Error(`tmux: ${started.stderr.toString()}`);
  for (let tries = 0; tries < 600; tries++) {
    const screen = Bun.spawnSync(["tmux", "-L", TMUX_SOCKET, "capture-pane", "-p", "-t", session]).stdout.toString();
    if (/EXIT=\d+/.test(screen)) return screen;
    await Bun.sleep(100);
  }
  throw new Error(`${command} did not finish on the terminal`);
}

export function stopTerminals(): void {
  if (noTerminal) return;
  Bun.spawnSync(["tmux", "-L", TMUX_SOCKET, "kill-server"]);
}
