/**
 * A bucket for tests: an s3rver started on a free 127.0.0.1 port with a temporary folder (in its own
 * process, so it can be stopped and started again to play an outage), or, when TEST_S3_ENDPOINT is set,
 * a real endpoint (TEST_S3_BUCKET, TEST_S3_ACCESS_KEY_ID, TEST_S3_SECRET_ACCESS_KEY, TEST_S3_REGION)
 * under a unique prefix that close() empties.
 *
 *   const bucket = await startTestBucket();
 *   startServer({ ...bucket.env, ... })   // CONTENT_STORE=s3 and every S3_* variable
 *   await bucket.close();
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { S3Client } from "bun";
import type { S3Settings } from "../../src/config";
import { freePort } from "./server";

export interface TestBucket {
  settings: S3Settings;
  /** CONTENT_STORE=s3 and the S3_* variables of this bucket, for loadConfig or a server's environment */
  env: Record<string, string>;
  /** a client on the bucket, to look at or tamper with objects behind Kiln's back */
  client: S3Client;
  /** true for the s3rver the tests started (stop()/start() work only then) */
  local: boolean;
  /** the s3rver's folder (objects' last-modified times are their files' mtimes), when local */
  directory?: string;
  /** makes the endpoint unreachable (connections refused) until start() */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** makes the endpoint hang (SIGSTOP: connections accepted, never answered) until thaw() */
  freeze(): void;
  thaw(): void;
  /** the object names under the prefix */
  objects(): Promise<string[]>;
  close(): Promise<void>;
}

const S3RVER_MAIN = resolve(import.meta.dir, "s3rver-main.ts");
/** s3rver accepts any request signed with its fixed credentials */
const S3RVER_KEY = "S3RVER";

async function spawnS3rver(port: number, directory: string, bucket: string): Promise<Subprocess<"ignore", "pipe", "pipe">> {
  const proc = Bun.spawn(["bun", S3RVER_MAIN, String(port), directory, bucket], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const reader = proc.stdout.getReader();
  let output = "";
  const deadline = Date.now() + 30_000;
  while (!output.includes("ready")) {
    const { done, value } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`s3rver did not start: ${output}${await new Response(proc.stderr).text()}`);
    output += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return proc;
}

export async function startTestBucket(options: { prefix?: string } = {}): Promise<TestBucket> {
  const prefix = options.prefix ?? `kiln-test-${Bun.randomUUIDv7().slice(-12)}/`;
  const endpoint = process.env.TEST_S3_ENDPOINT;
  let settings: S3Settings;
  let proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
  let directory: string | undefined;
  let port = 0;
  if (endpoint) {
    settings = {
      bucket: process.env.TEST_S3_BUCKET ?? "kiln-test",
      endpoint,
      region: process.env.TEST_S3_REGION ?? "us-east-1",
      accessKeyId: process.env.TEST_S3_ACCESS_KEY_ID ?? "",
      secretAccessKey: process.env.TEST_S3_SECRET_ACCESS_KEY ?? "",
      prefix,
    };
  } else {
    directory = mkdtempSync(join(tmpdir(), "kiln-s3rver-"));
    port = freePort();
    settings = {
      bucket: "kiln-test",
      endpoint: `http://127.0.0.1:${port}`,
      region: "us-east-1",
      accessKeyId: S3RVER_KEY,
      secretAccessKey: S3RVER_KEY,
      prefix,
    };
    proc = await spawnS3rver(port, directory, settings.bucket);
  }
  const client = new S3Client({ ...settings });
  const env: Record<string, string> = {
    CONTENT_STORE: "s3",
    S3_BUCKET: settings.bucket,
    S3_ENDPOINT: settings.endpoint!,
    S3_REGION: settings.region!,
    S3_ACCESS_KEY_ID: settings.accessKeyId!,
    S3_SECRET_ACCESS_KEY: settings.secretAccessKey!,
    S3_PREFIX: prefix,
  };
  const objects = async () => {
    const names: string[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await client.list({ prefix, continuationToken });
      for (const object of page.contents ?? []) names.push(object.key);
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (continuationToken);
    return names;
  };
  const stop = async () => {
    if (!proc) throw new Error("stop() needs the local s3rver (TEST_S3_ENDPOINT is set)");
    // SIGKILL: a graceful close would wait for the clients' keep-alive connections to time out
    proc.kill("SIGKILL");
    await proc.exited;
  };
  return {
    settings,
    env,
    client,
    local: proc !== undefined,
    directory,
    stop,
    freeze() {
      if (!proc) throw new Error("freeze() needs the local s3rver (TEST_S3_ENDPOINT is set)");
      proc.kill("SIGSTOP");
    },
    thaw() {
      proc?.kill("SIGCONT");
    },
    async start() {
      if (!directory) throw new Error("start() needs the local s3rver (TEST_S3_ENDPOINT is set)");
      if (proc && proc.exitCode === null && proc.signalCode === null) return;
      proc = await spawnS3rver(port, directory, settings.bucket);
    },
    objects,
    async close() {
      if (proc) {
        if (proc.exitCode === null && proc.signalCode === null) await stop();
        rmSync(directory!, { recursive: true, force: true });
      } else {
        for (const name of await objects()) await client.delete(name);
      }
    },
  };
}
