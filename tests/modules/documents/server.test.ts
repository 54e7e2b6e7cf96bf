/**
 * The real process (`bun src/index.ts`) with its content on disk: a restart keeps every document, and
 * a SIGKILL in the middle of content updates leaves every document complete, in an old or new state.
 * Runs against the embedded PostgreSQL, or, with TEST_DATABASE_URL, against a fresh database there.
 */
import { afterAll, expect, test } from "bun:test";
import { createTestDatabase, type TestDatabase } from "../../support/database";
import { type RunningServer, removeDataDir, startServer, tempDataDir } from "../../support/server";

const KEY = "kiln_DocumentsServerTestKey0123456789abcdef";
const running: RunningServer[] = [];
const dirs: string[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const server of running) await server.stop("SIGTERM");
  for (const database of databases) await database.drop();
  for (const dir of dirs) await removeDataDir(dir);
}, 60_000);

/** DATA_DIR, plus DATABASE_URL in the external mode: the same for every start of one test. */
async function environment(): Promise<Record<string, string>> {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const env: Record<string, string> = { DATA_DIR: dataDir, BOOTSTRAP_API_KEY: KEY };
  if (process.env.TEST_DATABASE_URL) {
    const database = await createTestDatabase();
    databases.push(database);
    env.DATABASE_URL = database.url;
  }
  return env;
}

async function launch(env: Record<string, string>) {
  const server = await startServer(env);
  running.push(server);
  return server;
}

/** identity: the checks compare the stored bytes with their length and hash, not a compressed representation */
function call(server: RunningServer, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  return fetch(server.url + path, {
    method,
    body,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "accept-encoding": "identity", ...headers },
  });
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

interface Snapshot {
  metadata: unknown;
  content: string;
}

async function snapshot(server: RunningServer, id: string): Promise<Snapshot> {
  const metadata = await (await call(server, "GET", `/api/v1/documents/${id}`)).json();
  const content = await (await call(server, "GET", `/api/v1/documents/${id}/content`)).text();
  return { metadata, content };
}

test("a restart keeps every document, its metadata, its exact content and the storage figure", async () => {
  const env = await environment();
  const first = await launch(env);
  const ids: string[] = [];
  for (const [i, content] of ['{"n": 12345678901234567890, "f": 1.0}', "[-0, 1e400]", '"é"', "null"].entries()) {
    const res = await call(first, "POST", "/api/v1/documents", `{"name":"doc ${i}","folder":"f/${i}","content":${content}}`);
    expect(res.status).toBe(201);
    ids.push(((await res.json()) as { document: { id: string } }).document.id);
  }
  expect((await call(first, "PUT", `/api/v1/documents/${ids[0]}/content`, '{"replaced": 1.50}')).status).toBe(200);
  expect((await call(first, "DELETE", `/api/v1/documents/${ids[3]}`)).status).toBe(200);
  const before = await Promise.all(ids.slice(0, 3).map((id) => snapshot(first, id)));
  const usage = await (await call(first, "GET", "/api/v1/usage")).json();
  const download = await call(first, "GET", `/api/v1/documents/${ids[1]}/content`);
  expect(download.headers.get("content-length")).toBe("11");
  await download.arrayBuffer();
  expect(await first.stop("SIGTERM")).toBe(0);

  const second = await launch(env);
  expect(await Promise.all(ids.slice(0, 3).map((id) => snapshot(second, id)))).toEqual(before);
  expect(before[0].content).toBe('{"replaced": 1.50}');
  expect(await (await call(second, "GET", "/api/v1/usage")).json()).toEqual(usage);
  const trash = (await (await call(second, "GET", "/api/v1/documents?deleted=true")).json()) as { documents: { id: string }[] };
  expect(trash.documents.map((d) => d.id)).toEqual([ids[3]]);
  await second.stop("SIGTERM");
}, 120_000);

test("SIGKILL during a stream of content updates: after restart every document is complete and matches its fileSize and ETag", async () => {
  const env = await environment();
  const first = await launch(env);
  const versions = (doc: number, version: number) =>
    JSON.stringify({ doc, version, padding: "x".repeat(((doc * 7919 + version * 104_729) % 200_000) + 1) });
  const ids: string[] = [];
  for (let doc = 0; doc < 4; doc++) {
    const res = await call(first, "POST", "/api/v1/documents", JSON.stringify({ name: `doc ${doc}`, contentText: versions(doc, 0) }));
    ids.push(((await res.json()) as { document: { id: string } }).document.id);
  }
  const acknowledged = ids.map(() => 0);
  let total = 0;
  let killed = false;
  const writers = ids.map(async (id, doc) => {
    for (let version = 1; !killed; version++) {
      try {
        const res = await call(first, "PUT", `/api/v1/documents/${id}/content`, versions(doc, version));
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        acknowledged[doc] = version;
        total++;
      } catch (error) {
        if (!killed) throw error;
      }
    }
  });
  while (total < 24) await Bun.sleep(5);
  killed = true;
  first.proc.kill("SIGKILL");
  await first.proc.exited;
  await Promise.all(writers);

  const second = await launch(env);
  let sum = 0;
  for (const [doc, id] of ids.entries()) {
    const meta = await call(second, "GET", `/api/v1/documents/${id}`);
    const { document } = (await meta.json()) as { document: { fileSize: number } };
    const content = await call(second, "GET", `/api/v1/documents/${id}/content`);
    const bytes = new Uint8Array(await content.arrayBuffer());
    expect(bytes.byteLength).toBe(document.fileSize);
    expect(content.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
    const stored = JSON.parse(new TextDecoder().decode(bytes)) as { doc: number; version: number };
    expect(stored.doc).toBe(doc);
    // the last acknowledged version, or the one in flight when the process died
    expect([acknowledged[doc], acknowledged[doc] + 1]).toContain(stored.version);
    expect(new TextDecoder().decode(bytes)).toBe(versions(doc, stored.version));
    // every kept version counts towards storage, and each one's content is there and matches its ETag
    const kept = (await (await call(second, "GET", `/api/v1/documents/${id}/versions?limit=200`)).json()) as {
      versions: { version: number; fileSize: number; etag: string }[];
    };
    expect(kept.versions[0].etag).toBe(`"${sha256(bytes)}"`);
    for (const version of kept.versions) {
      const old = new Uint8Array(
        await (await call(second, "GET", `/api/v1/documents/${id}/versions/${version.version}/content`)).arrayBuffer(),
      );
      expect([old.byteLength, `"${sha256(old)}"`]).toEqual([version.fileSize, version.etag]);
      sum += version.fileSize;
    }
  }
  const usage = (await (await call(second, "GET", "/api/v1/usage")).json()) as { storage: { usedBytes: number } };
  expect(usage.storage.usedBytes).toBe(sum);
  await second.stop("SIGTERM");
}, 180_000);
