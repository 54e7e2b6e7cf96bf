/**
 * Watches a running server from outside while a test attacks it: `/health` polled back to back (its
 * latencies and failures) and the process's resident memory sampled at the same pace.
 */
import { readFileSync } from "node:fs";

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

export function watchServer(url: string, pid: number, pauseMs = 20): { stop(): Promise<WatchReport> } {
  const latencies: number[] = [];
  let failures = 0;
  let peakRssBytes = rssOf(pid);
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
        await response.arrayBuffer();
        if (!response.ok) failures++;
      } catch {
        failures++;
      }
      latencies.push(performance.now() - started);
      peakRssBytes = Math.max(peakRssBytes, rssOf(pid));
      await Bun.sleep(pauseMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return {
        healthChecks: latencies.length,
        healthFailures: failures,
        healthMaxMs: Math.max(0, ...latencies),
        healthP99Ms: percentile(latencies, 99),
        peakRssBytes,
      };
    },
  };
}
