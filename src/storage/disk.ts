/**
 * The content store on local disk: `<root>/<shard>/<key>.json`. A write goes to `<key>.tmp` in the
 * same folder, is fsynced, renamed into place and the folder fsynced, so a crash at any instant leaves
 * either no file under the final name or the complete one (Bun.write alone is not atomic).
 */
import { constants, statSync } from "node:fs";
import { access, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import {
  type ContentStore,
  ContentStoreFull,
  ContentStoreUnavailable,
  type OpenedContent,
  type StoredContent,
  type StoredFile,
  sha256Hex,
} from "./content-store";

const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const COMPLETE = ".json";
const INCOMPLETE = ".tmp";

export class DiskContentStore implements ContentStore {
  private readonly readyShards = new Set<string>();

  constructor(readonly root: string) {}

  async put(bytes: Uint8Array): Promise<StoredContent> {
    try {
      return await this.write(bytes);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOSPC" || code === "EDQUOT") throw new ContentStoreFull(`no space left for ${bytes.byteLength} bytes in ${this.root}`);
      throw error;
    }
  }

  async probe(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true, mode: 0o750 });
      await access(this.root, constants.R_OK | constants.W_OK);
    } catch (error) {
      throw new ContentStoreUnavailable(
        `the content folder ${this.root} is not writable (${(error as NodeJS.ErrnoException).code})`,
        "DATA_DIR",
      );
    }
  }

  /** Temp file, fsync, rename, folder fsync; a failed write removes its temp file. */
  private async write(bytes: Uint8Array): Promise<StoredContent> {
    const key = Bun.randomUUIDv7();
    const folder = await this.shardFolder(key);
    const temp = join(folder, key + INCOMPLETE);
    const handle = await open(temp, "wx", 0o640);
    try {
      let written = 0;
      while (written < bytes.byteLength) written += (await handle.write(bytes, written)).bytesWritten;
      await handle.sync();
    } catch (error) {
      await handle.close();
      await removeFile(temp);
      throw error;
    }
    await handle.close();
    await rename(temp, join(folder, key + COMPLETE));
    await syncFolder(folder);
    return { key, size: bytes.byteLength, hash: sha256Hex(bytes) };
  }

  async open(key: string): Promise<OpenedContent | undefined> {
    if (!KEY.test(key)) return undefined;
    const path = this.pathOf(key, COMPLETE);
    // on this thread: a stat of a local file takes about 4 µs of CPU here, one through the runtime's
    // thread pool 30–50 (the hop), on every download
    const found = statSync(path, { throwIfNoEntry: false });
    return found === undefined ? undefined : { size: found.size, body: Bun.file(path) };
  }

  async remove(key: string): Promise<void> {
    if (!KEY.test(key)) return;
    await removeFile(this.pathOf(key, COMPLETE));
    await removeFile(this.pathOf(key, INCOMPLETE));
  }

  async *list(): AsyncIterable<StoredFile> {
    for (const shard of await entriesOf(this.root)) {
      const folder = join(this.root, shard);
      for (const name of await entriesOf(folder)) {
        const incomplete = name.endsWith(INCOMPLETE);
        if (!incomplete && !name.endsWith(COMPLETE)) continue;
        const key = name.slice(0, name.length - (incomplete ? INCOMPLETE : COMPLETE).length);
        if (!KEY.test(key)) continue;
        const modifiedAt = await stat(join(folder, name)).then(
          (s) => s.mtimeMs,
          () => undefined,
        );
        if (modifiedAt !== undefined) yield { key, incomplete, modifiedAt };
      }
    }
  }

  /** Where the complete content of `key` lives (the copy to a bucket reads it from there). */
  pathOf(key: string, suffix = COMPLETE): string {
    return join(this.root, shardOf(key), key + suffix);
  }

  /** Creates the shard folder on first use, making its own entry durable too. */
  private async shardFolder(key: string): Promise<string> {
    const shard = shardOf(key);
    const folder = join(this.root, shard);
    if (!this.readyShards.has(shard)) {
      const created = await mkdir(folder, { recursive: true, mode: 0o750 });
      if (created !== undefined) {
        await syncFolder(this.root);
        if (created !== folder) await syncFolder(join(this.root, ".."));
      }
      this.readyShards.add(shard);
    }
    return folder;
  }
}

/** The last two hex digits of a UUIDv7 are random: 256 folders, evenly filled. */
const shardOf = (key: string) => key.slice(-2);

/**
 * unlink, a file already gone being no error. Not fs.rm: its lstat before the unlink is a second trip
 * through the runtime's thread pool, which made a replace's removal of released content cost about
 * 55 µs more CPU (bench/README.md, Documents).
 */
async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function entriesOf(folder: string): Promise<string[]> {
  try {
    return await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** The content store of a Kiln process: `$DATA_DIR/content`. */
export const contentStoreIn = (dataDir: string) => new DiskContentStore(join(dataDir, "content"));
