/**
 * The content store in an S3-compatible bucket (AWS S3, R2, MinIO, Ceph RGW, …) through Bun's built-in
 * S3Client: `<prefix><key>.json`. An S3 PUT is atomic (the object appears whole once it answers, or not
 * at all), so a write needs no temp object; the crash-safety protocol is the disk store's: a fresh key per
 * content version written before the row commits, the replaced object removed after the commit, and the
 * orphan sweep over the bucket listing for whatever a crash leaves.
 *
 * Downloads: Bun.serve drops the Content-Length of a streamed body (oven-sh/bun#10507) and answers a
 * Response over an S3File with a redirect to the bucket, while the contract needs Content-Length, ETag
 * and Content-Disposition from Kiln itself. So small content is read into memory, and larger content is
 * streamed from the bucket into a node-local spool file that Bun then sends with sendfile: memory stays
 * flat whatever the size (Bun.write(path, s3File) streams; iterating s3File.stream() here buffered).
 */

import { mkdirSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { S3Client, type S3File } from "bun";
import { S3_TIMEOUT_MS_DEFAULT, type S3Settings } from "../config";
import {
  type ContentStore,
  ContentStoreUnavailable,
  type OpenedContent,
  type StoredContent,
  type StoredFile,
  sha256Hex,
} from "./content-store";

const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SUFFIX = ".json";
/** Content up to this size is served from memory; larger content goes through a spool file. */
export const IN_MEMORY_MAX_BYTES = 1 << 20;
/**
 * How long a spool file outlives its open(): Bun opens it as soon as the response starts, and an open
 * file stays readable after it is unlinked, so a minute is ample even for a slow client.
 */
const SPOOL_LIFETIME_MS = 60_000;
/** The health probe's deadline, like the database ping's. */
const PROBE_TIMEOUT_MS = 2_000;

/** The object the probe reads: never written, so a bucket that works answers NoSuchKey. */
const PROBE_OBJECT = "kiln-probe";

const MISSING = new Set(["NoSuchKey", "NotFound", "ERR_S3_FILE_NOT_FOUND"]);
/** Errors S3 asks clients to retry, and the pauses before the second and third tries. */
const TRANSIENT = new Set(["InternalError", "ServiceUnavailable", "SlowDown"]);
const RETRY_DELAYS_MS = [25, 100];
const BAD_CREDENTIALS: Record<string, string> = {
  InvalidAccessKeyId: "S3_ACCESS_KEY_ID",
  SignatureDoesNotMatch: "S3_SECRET_ACCESS_KEY",
  AccessDenied: "S3_ACCESS_KEY_ID",
  InvalidToken: "S3_SESSION_TOKEN",
  ExpiredToken: "S3_SESSION_TOKEN",
};

const codeOf = (error: unknown) => String((error as { code?: unknown })?.code ?? (error as Error)?.name ?? "unknown");
const isMissing = (error: unknown) => MISSING.has(codeOf(error));

export class S3ContentStore implements ContentStore {
  private readonly client: S3Client;
  private readonly spoolDir: string;

  /**
   * `spoolDir`: a node-local folder for large downloads in flight, emptied now (a crash may leave files).
   * `listPageSize`: keys per listing request (S3 returns at most 1000).
   */
  constructor(
    readonly settings: S3Settings,
    spoolDir: string,
    private readonly listPageSize = 1000,
  ) {
    this.client = new S3Client({
      bucket: settings.bucket,
      endpoint: settings.endpoint,
      region: settings.region,
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      sessionToken: settings.sessionToken,
    });
    this.spoolDir = spoolDir;
    rmSync(spoolDir, { recursive: true, force: true });
    mkdirSync(spoolDir, { recursive: true, mode: 0o750 });
  }

  async put(bytes: Uint8Array): Promise<StoredContent> {
    const key = Bun.randomUUIDv7();
    await this.call("write", () => this.client.write(this.objectKey(key), bytes, { type: "application/json" }));
    return { key, size: bytes.byteLength, hash: sha256Hex(bytes) };
  }

  async open(key: string): Promise<OpenedContent | undefined> {
    if (!KEY.test(key)) return undefined;
    const file = this.client.file(this.objectKey(key));
    // One ranged GET answers small content whole and tells large content apart by its length.
    let head: ArrayBuffer;
    try {
      head = await this.inTime("read", () => file.slice(0, IN_MEMORY_MAX_BYTES + 1).arrayBuffer());
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw this.unavailable("read", error);
    }
    if (head.byteLength <= IN_MEMORY_MAX_BYTES) return { size: head.byteLength, body: new Blob([head]) };
    return this.spool(key, file);
  }

  async remove(key: string): Promise<void> {
    if (!KEY.test(key)) return;
    await this.call("delete", () => this.client.delete(this.objectKey(key)));
  }

  /** Pages with start-after (the last key seen) rather than continuation tokens, which some S3 servers garble. */
  async *list(): AsyncIterable<StoredFile> {
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.call("list", () =>
        this.client.list({ prefix: this.settings.prefix, maxKeys: this.listPageSize, startAfter }),
      );
      const contents = page.contents ?? [];
      for (const object of contents) {
        const name = object.key.slice(this.settings.prefix.length);
        if (!name.endsWith(SUFFIX)) continue;
        const key = name.slice(0, -SUFFIX.length);
        if (!KEY.test(key)) continue;
        yield { key, incomplete: false, modifiedAt: Date.parse(String(object.lastModified)) };
      }
      if (!page.isTruncated || contents.length === 0) return;
      startAfter = contents.at(-1)!.key;
    }
  }

  /**
   * A GET of the first byte of an object Kiln never writes: NoSuchKey (or the byte) means the endpoint,
   * the bucket and the credentials all answered. Not a listing: how a listing behaves varies more among
   * S3 servers (s3rver from npm answers 500 to one that spans pages under Node 20), and readiness must not
   * hang on it. The request is presigned and sent with fetch so that the answer's HTTP status can be
   * told, which Bun's S3 errors leave out.
   */
  async probe(): Promise<void> {
    const timeoutMs = Math.min(PROBE_TIMEOUT_MS, this.timeoutMs);
    await this.call(
      "probe",
      async () => {
        const url = this.client.presign(`${this.settings.prefix}${PROBE_OBJECT}`, { method: "GET", expiresIn: 60 });
        const response = await fetch(url, { headers: { Range: "bytes=0-0" }, signal: AbortSignal.timeout(timeoutMs) });
        if (response.ok || response.status === 416) return;
        const body = await response.text();
        const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
        if (code === "NoSuchKey") return;
        const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1] ?? response.statusText;
        throw Object.assign(new Error(message), { code: code ?? `HTTP ${response.status}`, status: response.status });
      },
      timeoutMs,
    );
  }

  private get timeoutMs(): number {
    return this.settings.timeoutMs ?? S3_TIMEOUT_MS_DEFAULT;
  }

  /**
   * `run`, tried again after 25 and 100 ms when the bucket answers with an error S3 documents as
   * transient (InternalError, ServiceUnavailable, SlowDown): every call here is safe to repeat (a write
   * goes to a fresh key, a delete of a missing key is no error).
   */
  private async inTime<T>(operation: string, run: () => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attemptInTime(operation, run, timeoutMs);
      } catch (error) {
        if (attempt === RETRY_DELAYS_MS.length || !TRANSIENT.has(codeOf(error))) throw error;
        await Bun.sleep(RETRY_DELAYS_MS[attempt]!);
      }
    }
  }

  /** `run`, or a Timeout error once `timeoutMs` passed without an answer (the call itself is left to finish or fail). */
  private async attemptInTime<T>(operation: string, run: () => Promise<T>, timeoutMs: number): Promise<T> {
    let timer: Timer | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`no answer to ${operation} within ${timeoutMs} ms (S3_TIMEOUT_MS)`), { code: "Timeout" })),
        timeoutMs,
      );
    });
    const work = run();
    work.catch(() => {});
    try {
      return await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The object's name in the bucket; the migration from disk writes the same names. */
  objectKey(key: string): string {
    return `${this.settings.prefix}${key}${SUFFIX}`;
  }

  /** The size of an object, or undefined when there is none. */
  async sizeOf(key: string): Promise<number | undefined> {
    try {
      return (await this.inTime("stat", () => this.client.file(this.objectKey(key)).stat())).size;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw this.unavailable("stat", error);
    }
  }

  /** Uploads a local file as the content of `key` (the migration from disk). */
  async upload(key: string, path: string): Promise<void> {
    await this.call("write", () => this.client.write(this.objectKey(key), Bun.file(path), { type: "application/json" }));
  }

  /** Copies the object into a spool file (Bun.write streams it: never held whole) and serves that file. */
  private async spool(key: string, file: S3File): Promise<OpenedContent | undefined> {
    const path = join(this.spoolDir, `${key}-${Bun.randomUUIDv7()}`);
    let size: number;
    try {
      size = await this.inTime("read", () => Bun.write(path, file));
    } catch (error) {
      await rm(path, { force: true });
      if (isMissing(error)) return undefined;
      throw this.unavailable("read", error);
    }
    setTimeout(() => void rm(path, { force: true }).catch(() => {}), SPOOL_LIFETIME_MS).unref();
    return { size, body: Bun.file(path) };
  }

  private async call<T>(operation: string, run: () => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    try {
      return await this.inTime(operation, run, timeoutMs);
    } catch (error) {
      throw this.unavailable(operation, error);
    }
  }

  /**
   * What the bucket answered, or that it did not: an S3 error code (Bun's S3Error, or the probe's with
   * its HTTP status) is an answer, anything else (refused, reset, timed out) is no answer.
   */
  private unavailable(operation: string, error: unknown): ContentStoreUnavailable {
    const code = codeOf(error);
    const status = (error as { status?: number })?.status;
    const answer = `S3 ${operation}: ${status ? `HTTP ${status} ` : ""}${code}`;
    const where = `bucket '${this.settings.bucket}'${this.settings.endpoint ? ` at ${this.settings.endpoint}` : ""}`;
    if (code === "NoSuchBucket") return new ContentStoreUnavailable(`${where} does not exist (${answer})`, "S3_BUCKET");
    if (code in BAD_CREDENTIALS) return new ContentStoreUnavailable(`${where} refused the credentials (${answer})`, BAD_CREDENTIALS[code]);
    const message = (error as Error)?.message ?? String(error);
    const answered = status !== undefined || (error as Error)?.name === "S3Error";
    return new ContentStoreUnavailable(
      answered ? `${where} answered with an error (${answer}: ${message})` : `${where} cannot be reached (${answer}: ${message})`,
      "S3_ENDPOINT",
    );
  }
}
