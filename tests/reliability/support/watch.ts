/**
 * Watches a running server from outside while a test attacks it: `/health` polled back to back (its
 * latencies and failures) and the process's resident memory sampled at the same pace.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface WatchReport {
  healthChecks: number;
  healthFailures: number;
  healthMaxMs: number;
  healthP99Ms: number;
  peakRssBytes: number;
}

/** Resident memory of a process, from /proc (0 where there is none). */
export function rssOf(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((entry) => entry.startsWith("VmRSS:"));
    return line ? Number(line.split(/\s+/)[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/**
 * /health is polled from a process of its own (health-probe.ts), so the latencies are the server's and
 * not the attacking test's event loop; memory is sampled here every `pauseMs`.
 */
export function watchServer(url: string, pid: number, pauseMs = 20): { stop(): Promise<WatchReport> } {
  const probe = Bun.spawn(["bun", join(import.meta.dir, "health-probe.ts"), url, String(pauseMs)], { stdout: "pipe", stderr: "inherit" });
  const output = new Response(probe.stdout).text();
  let peakRssBytes = rssOf(pid);
  const sampler = setInterval(() => {
    peakRssBytes = Math.max(peakRssBytes, rssOf(pid));
  }, pauseMs);
  return {
    async stop() {
      clearInterval(sampler);
      peakRssBytes = Math.max(peakRssBytes, rssOf(pid));
      probe.kill("SIGTERM");
      await probe.exited;
      const lines = (await output).split("\n").filter((line) => line !== "");
      const latencies = lines.filter((line) => line !== "fail").map(Number);
      return {
        healthChecks: lines.length,
        healthFailures: lines.length - latencies.length,
        healthMaxMs: Math.max(0, ...latencies),
        healthP99Ms: percentile(latencies, 99),
        peakRssBytes,
      };
    },
  };
}

/** Tenant B's side of a noisy-neighbour test: `read` back to back until `deadline` (epoch ms), each read timed. */
export async function readBackToBack(
  deadline: number,
  read: () => Promise<Response>,
): Promise<{ latencies: number[]; failures: number[] }> {
  const latencies: number[] = [];
  const failures: number[] = [];
  while (Date.now() < deadline) {
    const started = performance.now();
    const response = await read();
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    if (response.status !== 200) failures.push(response.status);
  }
  return { latencies, failures };
}
