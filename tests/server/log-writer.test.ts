import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";

const writer = resolve(import.meta.dir, "../../src/server/log-writer.ts");

/** Runs a script that logs through batchedStdout and returns its standard output. */
async function stdoutOf(script: string): Promise<string> {
  const proc = Bun.spawn(
    ["bun", "-e", `import { batchedStdout } from ${JSON.stringify(writer)};\nconst write = batchedStdout();\n${script}`],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, err).toBe(0);
  return out;
}

describe("batched standard output", () => {
  test("lines of one turn and of later turns all arrive, in order, one per line", async () => {
    const out = await stdoutOf(`write("one"); write("two"); setTimeout(() => write("three"), 5);`);
    expect(out).toBe("one\ntwo\nthree\n");
  });

  test("lines still pending when the process exits are written", async () => {
    const out = await stdoutOf(`write("first"); write("last"); process.exit(0);`);
    expect(out).toBe("first\nlast\n");
  });

  test("a burst larger than one batch loses nothing", async () => {
    const out = await stdoutOf(`for (let i = 0; i < 20000; i++) write("line " + i);`);
    const lines = out.trimEnd().split("\n");
    expect(lines).toHaveLength(20000);
    expect(lines[0]).toBe("line 0");
    expect(lines[19999]).toBe("line 19999");
  });
});
