/**
 * Moves a single-node deployment's content from disk to a bucket: `bun run content:copy-to-s3`.
 * Copies every content file of `$DATA_DIR/content` that the bucket (the S3_* variables) does not hold yet
 * under the same key, and nothing else: the database is never opened, rows keep their keys, and the disk
 * files stay. Resumable: an object already there with the file's size is skipped; a copy is verified by
 * its size in the bucket. A progress bar when stdout is a terminal, a plain summary otherwise.
 * Exit code 0 when every file is in the bucket, 1 otherwise.
 */

import { stat } from "node:fs/promises";
import { join } from "node:path";
import { SingleBar } from "cli-progress";
import { type Config, ConfigError, loadConfig } from "../config";
import { ContentStoreUnavailable } from "./content-store";
import { DiskContentStore } from "./disk";
import { S3ContentStore } from "./s3";

/** Uploads in flight at once: enough to hide the bucket's latency, few enough for a small machine. */
const PARALLEL = 8;
/** Tries per file before it counts as failed: a bucket over a network has passing hiccups. */
const ATTEMPTS = 3;
const RETRY_DELAY_MS = 250;

export interface CopyProgress {
  total: number;
  done: number;
  copied: number;
  skipped: number;
  failed: number;
  copiedBytes: number;
}

export interface CopyFailure {
  key: string;
  reason: string;
}

/** Copies the complete files of `source` missing from `target` (by key and size); never removes anything. */
export async function copyDiskToBucket(
  source: DiskContentStore,
  target: S3ContentStore,
  onProgress: (progress: CopyProgress) => void = () => {},
): Promise<CopyProgress & { failures: CopyFailure[] }> {
  const files: { key: string; path: string; size: number }[] = [];
  for await (const file of source.list()) {
    if (file.incomplete) continue; // a write that never finished: no row names it
    const path = source.pathOf(file.key);
    const size = await stat(path).then(
      (found) => found.size,
      () => undefined,
    );
    if (size !== undefined) files.push({ key: file.key, path, size });
  }
  const progress: CopyProgress = { total: files.length, done: 0, copied: 0, skipped: 0, failed: 0, copiedBytes: 0 };
  const failures: CopyFailure[] = [];
  onProgress(progress);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++];
      for (let attempt = 1; ; attempt++) {
        try {
          if ((await target.sizeOf(file.key)) === file.size) progress.skipped++;
          else {
            await target.upload(file.key, file.path);
            const copied = await target.sizeOf(file.key);
            if (copied !== file.size) throw new Error(`the bucket holds ${copied ?? "no"} bytes after the copy, the file ${file.size}`);
            progress.copied++;
            progress.copiedBytes += file.size;
          }
          break;
        } catch (error) {
          if (attempt < ATTEMPTS) {
            await Bun.sleep(RETRY_DELAY_MS * attempt);
            continue;
          }
          progress.failed++;
          failures.push({ key: file.key, reason: (error as Error).message });
          break;
        }
      }
      progress.done++;
      onProgress(progress);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return { ...progress, failures };
}

async function main(): Promise<number> {
  let config: Config;
  try {
    config = loadConfig({ ...process.env, CONTENT_STORE: "s3" });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`content:copy-to-s3: ${error.message}`);
    return 1;
  }
  if (config.contentStore.kind !== "s3") return 1;
  const source = new DiskContentStore(join(config.dataDir, "content"));
  const target = new S3ContentStore(config.contentStore.s3, join(config.dataDir, "s3-spool"));
  try {
    await target.probe();
  } catch (error) {
    if (!(error instanceof ContentStoreUnavailable)) throw error;
    console.error(`content:copy-to-s3: check ${error.setting}: ${error.message}`);
    return 1;
  }
  const where = `s3://${config.contentStore.s3.bucket}/${config.contentStore.s3.prefix}`;
  console.log(`Copying ${source.root} to ${where}`);
  const bar = process.stdout.isTTY
    ? new SingleBar({
        format:
          "[{bar}] {percentage}% | {value}/{total} files | {copied} copied, {skipped} already there, {failed} failed | ETA {eta_formatted}",
        stream: process.stdout,
        hideCursor: true,
      })
    : undefined;
  let started = false;
  const result = await copyDiskToBucket(source, target, (progress) => {
    if (!bar) return;
    if (!started) bar.start(progress.total, 0, progress);
    started = true;
    bar.update(progress.done, progress);
  });
  bar?.stop();
  for (const failure of result.failures.slice(0, 20)) console.error(`failed: ${failure.key}: ${failure.reason}`);
  if (result.failures.length > 20) console.error(`… and ${result.failures.length - 20} more failures`);
  console.log(
    `${result.total} content files: ${result.copied} copied (${result.copiedBytes} bytes), ${result.skipped} already in the bucket, ${result.failed} failed`,
  );
  if (result.failed > 0) console.log("Run the command again to retry the failed files; the copied ones are skipped.");
  return result.failed === 0 ? 0 : 1;
}

if (import.meta.main) process.exit(await main());
