/**
 * An s3rver (a small S3 implementation on the local file system) in its own process, for tests and the
 * bench, and a local bucket to try Kiln on (docs/storage.md): `bun tests/support/s3rver-main.ts <port>
 * <directory> <bucket>`. Prints `ready <port>` once it listens; SIGTERM stops it once its connections
 * are closed (the tests SIGKILL it).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

// Two shims for what s3rver takes from Node and Bun does differently (this process runs only s3rver).
// Its listing walks folders expecting readdirSync's names in order, as Node's libuv gives them; Bun
// gives them in directory order, so a listing with max-keys would skip and repeat keys.
const readdirSync = fs.readdirSync as (...args: unknown[]) => unknown;
(fs as Record<string, unknown>).readdirSync = (...args: unknown[]) => {
  const names = readdirSync(...args);
  return Array.isArray(names) && names.every((name) => typeof name === "string") ? names.sort() : names;
};
// It encrypts its list continuation tokens with the cipher named "des", an alias Bun's crypto does
// not know (every truncated listing would answer 500); "des-cbc" is the same cipher.
for (const name of ["createCipheriv", "createDecipheriv"] as const) {
  const original = crypto[name] as (algorithm: string, ...rest: unknown[]) => unknown;
  (crypto as Record<string, unknown>)[name] = (algorithm: string, ...rest: unknown[]) =>
    original(algorithm === "des" ? "des-cbc" : algorithm, ...rest);
}

// imported after the shims: fs-extra copies the fs functions when it loads
const { default: S3rver } = await import("s3rver");

// A third: after each delete s3rver reads the object's whole folder to see whether it is now empty, which
// with the sort above is O(n log n) per delete and blocks its one thread. Kiln keeps every object in one
// folder, so after a burst of replaces (the benchmark's: tens of thousands of objects) each delete took
// tens of milliseconds and the deletes starved every other request. rmdir tells an empty folder from a
// full one by itself.
type Content = Buffer | NodeJS.ReadableStream;
type Written = Promise<{ size: number; md5: string }>;
type Store = {
  getBucketPath(bucket: string): string;
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
};
type StoredObject = { bucket: string; key: string; content: Content; metadata: unknown };
const STORE_MODULE = "s3rver/lib/stores/filesystem.js"; // not typed: s3rver declares only its entry point
const { default: FilesystemStore } = (await import(STORE_MODULE)) as {
  default: {
    prototype: Store & {
      deleteObject(bucket: string, key: string): Promise<void>;
      putObject(object: StoredObject): Written;
      putPart(bucket: string, uploadId: string, partNumber: number, content: Content): Written;
    };
  };
};
FilesystemStore.prototype.deleteObject = async function (this: Store, bucket: string, key: string) {
  const files = ["object", "object.md5", "metadata.json"].map((resource) => this.getResourcePath(bucket, key, resource));
  await Promise.all(
    files.map((file) =>
      fs.promises.unlink(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      }),
    ),
  );
  const folders = key.split("/").slice(0, -1);
  for (; folders.length > 0; folders.pop()) {
    const removed = await fs.promises.rmdir(path.join(this.getBucketPath(bucket), ...folders)).then(
      () => true,
      () => false,
    );
    if (!removed) return;
  }
};

// A fourth: s3rver answered a PUT (and a multipart upload's part) once its bytes were handed to a write
// stream, before they were in the file, so a HEAD or GET right after could still see the object as it
// was (the copy-to-s3 test's re-run counted a shortened object as "already there" once under load). Both
// now answer once the file is written. The file is opened before any byte is read: a delete of the
// folder's last object removes the folder (above), and one that falls between the mkdir and the open is
// met by making it again, which a stream already half read could not be.
FilesystemStore.prototype.putObject = async function (this: Store, object: StoredObject) {
  const written = await writeCounted(object.content, this.getResourcePath(object.bucket, object.key, "object"));
  await this.putMetadata(object.bucket, object.key, object.metadata, written.md5);
  return written;
};
FilesystemStore.prototype.putPart = async function (this: Store, bucket: string, uploadId: string, partNumber: number, content: Content) {
  const file = path.join(this.getResourcePath(bucket, undefined, "uploads"), uploadId, String(partNumber));
  const written = await writeCounted(content, file);
  await fs.promises.writeFile(`${file}.md5`, written.md5);
  return written;
};

async function writeCounted(content: Content, file: string): Written {
  const handle = await openCreatingFolder(file);
  const md5 = crypto.createHash("md5");
  let size = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  await pipeline(Buffer.isBuffer(content) ? Readable.from([content]) : content, counted, handle.createWriteStream());
  return { size, md5: md5.digest("hex") };
}

async function openCreatingFolder(file: string): Promise<fs.promises.FileHandle> {
  for (let tries = 1; ; tries++) {
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    try {
      return await fs.promises.open(file, "w");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || tries === 10) throw error;
    }
  }
}

// A client that dies mid-request (the crash tests SIGKILL Kiln while it uploads) must not take the
// stand-in down with it, as it cannot take down a real bucket: an error that escapes s3rver's handlers
// ends that request only. (Nothing reads this process's output after `ready`, so nothing is logged.)
process.on("uncaughtException", () => {});
process.on("unhandledRejection", () => {});

const [port, directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  port: Number(port),
  address: "127.0.0.1",
  silent: true,
  directory,
  configureBuckets: [{ name: bucket, configs: [] }],
});
const { port: bound } = (await server.run()) as { port: number };
console.log(`ready ${bound}`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
