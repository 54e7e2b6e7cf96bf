/**
 * Section "compression": one 10 MB document downloaded as stored, gzip- and br-compressed, rounds
 * alternating between the three so other load on the machine touches each alike; the best round of
 * each counts. Throughput is of the document (10 MB per download), measured by a client that reads the
 * bytes as sent (no decompression on its side), one download at a time.
 */

import { documentText, MB } from "./lib/data";
import { rows, times } from "./lib/report";
import { api, type KilnServer } from "./lib/servers";
import type { Settings } from "./settings";

const SIZE = 10 * MB;
const CODINGS = ["identity", "gzip", "br"] as const;

async function download(kiln: KilnServer, id: string, coding: string): Promise<number> {
  const response = await fetch(`${kiln.url}/api/v1/documents/${id}/content`, {
    headers: { authorization: `Bearer ${kiln.key}`, "accept-encoding": coding },
    decompress: false,
  } as RequestInit);
  if (!response.ok) throw new Error(`download (${coding}): ${response.status}`);
  if ((response.headers.get("content-encoding") ?? "identity") !== coding)
    throw new Error(`asked for ${coding}, got ${response.headers.get("content-encoding")}`);
  let wire = 0;
  for await (const chunk of response.body!) wire += chunk.byteLength;
  return wire;
}

export async function benchCompression(settings: Settings, kiln: KilnServer): Promise<void> {
  const { document } = await api(kiln.url, kiln.key, "POST", "/api/v1/documents", { name: "compression-10mb", content: [] });
  const upload = await fetch(`${kiln.url}/api/v1/documents/${document.id}/content`, {
    method: "PUT",
    headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/json" },
    body: documentText(SIZE),
  });
  if (!upload.ok) throw new Error(`10 MB upload: ${upload.status} ${await upload.text()}`);
  const downloadsPerRound = settings.full ? 10 : 4;
  const best = new Map<string, { mbps: number; wire: number }>();
  for (let round = 0; round < settings.loadRounds + 1; round++) {
    for (const coding of CODINGS) {
      await download(kiln, document.id, coding); // warm: the file in the page cache, the codec loaded
      const started = performance.now();
      let wire = 0;
      for (let i = 0; i < downloadsPerRound; i++) wire = await download(kiln, document.id, coding);
      const mbps = (SIZE * downloadsPerRound) / MB / ((performance.now() - started) / 1000);
      if (mbps > (best.get(coding)?.mbps ?? 0)) best.set(coding, { mbps, wire });
    }
  }
  const plain = best.get("identity")!;
  for (const coding of ["gzip", "br"] as const) {
    const result = best.get(coding)!;
    rows.push({
      section: "compression",
      case: `10 MB download, ${coding}`,
      kiln: `${result.mbps.toFixed(0)} MB/s (${(result.wire / MB).toFixed(2)} MB sent)`,
      reference: `uncompressed: ${plain.mbps.toFixed(0)} MB/s (${(plain.wire / MB).toFixed(2)} MB sent)`,
      ratio: `${times(result.mbps / plain.mbps)} speed, ${times(plain.wire / result.wire)} smaller`,
    });
  }
}
