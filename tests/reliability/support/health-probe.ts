/**
 * Polls `<url>/health` back to back, `pauseMs` apart, until it is stopped (SIGTERM); prints one line per
 * check: the latency in ms, or `fail`. A process of its own, so that the attacking test's own work
 * (building large bodies, reading large answers) never delays a check it is timing.
 *
 *   bun tests/reliability/support/health-probe.ts <url> <pauseMs>
 */
const [url, pause] = process.argv.slice(2);
const pauseMs = Number(pause ?? 20);
let running = true;
process.on("SIGTERM", () => {
  running = false;
});
while (running) {
  const started = performance.now();
  let line: string;
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    line = response.ok ? String(performance.now() - started) : "fail";
  } catch {
    line = "fail";
  }
  process.stdout.write(`${line}\n`);
  await Bun.sleep(pauseMs);
}

export {};
