/**
 * Section "export": the server's memory while it exports many documents as NDJSON. The documents are
 * imported first (the import stream is generated on the fly, so neither side holds it whole), then the
 * server's peak RSS (VmHWM, reset through /proc/<pid>/clear_refs just before) is read across an export
 * of one folder of a tenth of them and across an export of all of them: flat memory means both peaks
 * are about the same although the second export is ten times longer.
 *
 *   bun bench/export-memory.ts [--documents 10000] [--bytes 20000]    (also part of `bun run bench`)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { recordsOfSize } from "./lib/data";
import { mib, rows, table, times } from "./lib/report";
import { type KilnServer, startKiln, stopAll } from "./lib/servers";

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/** NDJSON lines of `count` documents of about `bytes` each; a tenth of them in folder "sample". */
function importStream(count: number, bytes: number): ReadableStream<Uint8Array> {
  const records = JSON.stringify(recordsOfSize(bytes - 20));
  const encoder = new TextEncoder();
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index === count) return controller.close();
      const folder = index % 10 === 0 ? "sample" : "bulk";
      controller.enqueue(
        encoder.encode(
          `{"document":{"name":"doc ${index}","folder":"${folder}","tags":["bench"]},"content":{"n":${index},"records":${records}}}\n`,
        ),
      );
      index++;
    },
  });
}

async function importDocuments(kiln: KilnServer, count: number, bytes: number): Promise<void> {
  const response = await fetch(`${kiln.url}/api/v1/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/x-ndjson" },
    body: importStream(count, bytes),
  });
  let lines = 0;
  let failed = "";
  let rest = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    rest = parts.pop()!;
    for (const line of parts) {
      lines++;
      if (line.includes('"error"') && !failed) failed = line;
    }
  }
  if (response.status !== 200 || lines !== count || failed)
    throw new Error(`import: status ${response.status}, ${lines} of ${count} lines, ${failed}`);
}

/** Exports (reading and dropping the stream); the server's RSS before and its peak during it. */
async function exportPeak(
  kiln: KilnServer,
  query: string,
): Promise<{ before: number; peak: number; bytes: number; lines: number; seconds: number }> {
  await Bun.sleep(500);
  writeFileSync(`/proc/${kiln.pid}/clear_refs`, "5");
  const before = memory(kiln.pid).rss;
  const started = performance.now();
  const response = await fetch(`${kiln.url}/api/v1/export${query}`, {
    headers: { authorization: `Bearer ${kiln.key}`, "accept-encoding": "identity" },
    decompress: false,
  } as RequestInit);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body!) {
    bytes += chunk.byteLength;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return { before, peak: memory(kiln.pid).peak, bytes, lines, seconds: (performance.now() - started) / 1000 };
}

export async function benchExportMemory(count: number, bytes: number): Promise<void> {
  const kiln = await startKiln("embedded");
  const importStarted = performance.now();
  await importDocuments(kiln, count, bytes);
  const importSeconds = (performance.now() - importStarted) / 1000;
  const importPeak = memory(kiln.pid).peak;
  const sample = await exportPeak(kiln, "?folder=sample");
  const all = await exportPeak(kiln, "");
  if (all.lines !== count || sample.lines !== Math.ceil(count / 10)) throw new Error(`export gave ${all.lines} and ${sample.lines} lines`);
  await kiln.stop();
  const line = (result: typeof all) =>
    `${mib(result.peak)} peak (${mib(result.before)} before), ${result.lines.toLocaleString("en")} documents, ${mib(result.bytes)} in ${result.seconds.toFixed(1)} s`;
  rows.push({
    section: "export",
    case: `peak RSS exporting ${count.toLocaleString("en")} documents`,
    kiln: line(all),
    reference: `a tenth of them: ${line(sample)}`,
    ratio: `${times(all.peak / sample.peak)} the memory for ${times(all.bytes / sample.bytes)} the bytes`,
  });
  console.error(
    `bench: export: imported ${count} documents in ${importSeconds.toFixed(1)} s (server peak ${mib(importPeak)}); export all: ${line(all)}; sample: ${line(sample)}`,
  );
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { documents: { type: "string", default: "10000" }, bytes: { type: "string", default: "20000" } },
  });
  try {
    await benchExportMemory(Number(values.documents), Number(values.bytes));
  } finally {
    await stopAll();
  }
  console.log(table());
}
