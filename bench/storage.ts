/**
 * Section "storage": the Documents API on the S3 content store next to the disk store, in the same run,
 * rounds alternating. The bucket is an s3rver on loopback (tests/support/s3.ts), a stand-in for a real
 * object store: its ratio says what Kiln's S3 path costs here, not what AWS S3 or MinIO would give.
 * Also the server's RSS while it sends one 50 MB download, on each store.
 */
import { readFileSync } from "node:fs";
import { startTestBucket } from "../tests/support/s3";
import { bestOfRounds, cases, describe, seed } from "./documents";
import { notes, rows, times } from "./lib/report";
import { type KilnServer, startKiln } from "./lib/servers";
import type { Settings } from "./settings";

const CASES = ["get metadata", "create 1 KB", "replace 1 KB, 50 documents", "download 1 MB", "download 50 MB"];

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

/** RSS before one download of `id` and its peak while the body streams (read and dropped by the client). */
async function rssDuringDownload(kiln: KilnServer, id: string): Promise<{ before: number; peak: number; bytes: number }> {
  const before = rssOf(kiln.pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(kiln.pid));
  }, 10);
  let bytes = 0;
  try {
    const response = await fetch(`${kiln.url}/api/v1/documents/${id}/content`, {
      headers: { authorization: `Bearer ${kiln.key}`, "accept-encoding": "identity" },
    });
    for await (const chunk of response.body!) bytes += chunk.byteLength;
  } finally {
    clearInterval(sampler);
  }
  return { before, peak: Math.max(peak, rssOf(kiln.pid)), bytes };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

export async function benchStorage(settings: Settings): Promise<void> {
  const bucket = await startTestBucket();
  try {
    const disk = await startKiln("embedded");
    const s3 = await startKiln("embedded", bucket.env);
    const [diskIds, s3Ids] = [await seed(disk), await seed(s3)];
    const diskCases = cases(diskIds);
    const s3Cases = cases(s3Ids);
    for (const name of CASES) {
      const onDisk = diskCases.find((c) => c.name === name);
      const onS3 = s3Cases.find((c) => c.name === name);
      if (!onDisk || !onS3) throw new Error(`bench/storage.ts: bench/documents.ts has no case named '${name}'`);
      const [ofS3, ofDisk] = bestOfRounds(
        [
          { server: s3, key: s3.key, spec: onS3.spec },
          { server: disk, key: disk.key, spec: onDisk.spec },
        ],
        settings,
      );
      rows.push({
        section: "storage (S3 vs disk, embedded PG)",
        case: name,
        kiln: `S3: ${describe(ofS3)}`,
        reference: `disk: ${describe(ofDisk)}`,
        ratio: `${times(ofS3.rps / ofDisk.rps)} req/s`,
      });
      console.error(`bench: storage ${name}: S3 ${describe(ofS3)}; disk ${describe(ofDisk)}`);
    }
    for (const [store, kiln, id] of [
      ["S3", s3, s3Ids.fiftyMb],
      ["disk", disk, diskIds.fiftyMb],
    ] as const) {
      const rss = await rssDuringDownload(kiln, id);
      rows.push({
        section: "storage (S3 vs disk, embedded PG)",
        case: `RSS during one 50 MB download (${store})`,
        kiln: `${mb(rss.before)} → peak ${mb(rss.peak)}`,
        reference: `${mb(rss.bytes)} sent`,
        ratio: `+${mb(rss.peak - rss.before)}`,
      });
    }
    notes.push(
      "storage: the bucket is an s3rver on loopback (a small S3 server in JavaScript, on the same 2 cores), a stand-in for a real object store: the ratios show the cost of Kiln's S3 path here, not what AWS S3 or MinIO would give",
    );
    await s3.stop();
    await disk.stop();
  } finally {
    await bucket.close();
  }
}
