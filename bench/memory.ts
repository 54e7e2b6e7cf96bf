/**
 * Section 4: the server's peak resident memory (VmHWM, which covers its worker threads too) during one
 * 50 MB utility run and one 50 MB download, each on a freshly started Kiln (sharing the database and
 * content folder), its peak reset through /proc/<pid>/clear_refs just before the request.
 */

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { dataPath, documentText, recordsOfSize } from "./lib/data";
import { mib, rows, times } from "./lib/report";
import { api, type KilnServer, startKiln } from "./lib/servers";
import { kilnRun } from "./utilities";

const FIFTY_MB = 50_000_000;

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/** Runs `work` and returns the process's peak RSS during it (and its RSS just before). */
async function peakDuring(pid: number, work: () => Promise<unknown>): Promise<{ before: number; peak: number }> {
  Bun.gc(true);
  await Bun.sleep(200); // let the server settle (its own GC, freed buffers)
  writeFileSync(`/proc/${pid}/clear_refs`, "5"); // 5: reset the peak RSS to the current RSS
  const before = memory(pid).rss;
  await work();
  return { before, peak: memory(pid).peak };
}

/** The same request in a bare process (bench/floor-memory.ts): what parsing and running alone need. */
function floorPeak(utilityId: string, body: string): { before: number; peak: number } {
  const file = dataPath("memory-body.json");
  writeFileSync(file, body);
  const result = spawnSync("bun", [resolve(import.meta.dir, "floor-memory.ts"), utilityId, file], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`floor-memory failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** A fresh Kiln process over the same database and content folder: its peak belongs to one request. */
const freshKiln = (kiln: KilnServer, env: Record<string, string> = {}) =>
  startKiln("embedded", { DATABASE_URL: kiln.databaseUrl, DATA_DIR: kiln.dataDir, ...env });

export async function benchMemory(kiln: KilnServer): Promise<void> {
  const config = { search: "alpha", replacement: "omega" };
  const wrapper = JSON.stringify({ inputs: { primary: [] }, config }).length;
  const body = JSON.stringify({ inputs: { primary: recordsOfSize(FIFTY_MB - wrapper) }, config });
  const forRun = await freshKiln(kiln);
  const run = await peakDuring(forRun.pid, () => kilnRun(kiln, "structure.find-replace", body, forRun));
  await forRun.stop();
  // the same run on the main thread (inline threshold above 50 MB): what the worker hand-off adds
  const forInlineRun = await freshKiln(kiln, { UTILITY_INLINE_MAX_BYTES: String(2 * FIFTY_MB) });
  const inlineRun = await peakDuring(forInlineRun.pid, () => kilnRun(kiln, "structure.find-replace", body, forInlineRun));
  await forInlineRun.stop();
  const floor = floorPeak("structure.find-replace", body);
  rows.push({
    section: "memory",
    case: "peak RSS, 50 MB find-replace",
    kiln: `${mib(run.peak)} (${mib(run.before)} before)`,
    reference: `floor: ${mib(floor.peak)} (${mib(floor.before)} before) · Kiln inline: ${mib(inlineRun.peak)}; input 48 MiB`,
    ratio: `+${times((run.peak - run.before) / FIFTY_MB)} input`,
    target: "growth ≤ 4× input",
    met: run.peak - run.before <= 4 * FIFTY_MB,
  });

  const { document } = await api(kiln.url, kiln.key, "POST", "/api/v1/documents", { name: "memory-50mb", content: [] });
  const upload = await fetch(`${kiln.url}/api/v1/documents/${document.id}/content`, {
    method: "PUT",
    headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/json" },
    body: documentText(FIFTY_MB),
  });
  if (!upload.ok) throw new Error(`50 MB upload: ${upload.status} ${await upload.text()}`);
  const forDownload = await freshKiln(kiln);
  const download = await peakDuring(forDownload.pid, async () => {
    const response = await fetch(`${forDownload.url}/api/v1/documents/${document.id}/content`, {
      headers: { authorization: `Bearer ${kiln.key}`, "accept-encoding": "identity" },
    });
    let received = 0;
    for await (const chunk of response.body!) received += chunk.byteLength;
    if (received < FIFTY_MB * 0.99) throw new Error(`50 MB download gave ${received} bytes`);
  });
  await forDownload.stop();
  rows.push({
    section: "memory",
    case: "peak RSS, 50 MB download",
    kiln: `${mib(download.peak)} (${mib(download.before)} before)`,
    reference: "document: 48 MiB",
    ratio: `+${mib(download.peak - download.before)}`,
  });
  console.error(`bench: memory: 50 MB run peak ${mib(run.peak)}, 50 MB download peak ${mib(download.peak)}`);
}
