/**
 * The bare baseline: what Kiln's hot endpoints cost with no framework and no validation. One
 * Bun.serve, postgres.js with the same SQL as Kiln's repositories (key-hash lookup, cached for the
 * same 500 ms; the same document queries over the same indexes) and the same file I/O (temp file,
 * fsync, rename, folder fsync; downloads through Bun.file). It shares Kiln's database, schema and
 * content folder, so both serve the very same rows and files.
 *
 * Env: PORT, DATABASE_URL, CONTENT_DIR.
 */

import { mkdir, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import postgres from "postgres";
import { findUtility } from "../../src/utilities/registry";
import { plainHandler } from "./plain";

const sql = postgres(process.env.DATABASE_URL!, { max: 20, onnotice: () => {} });
const contentDir = process.env.CONTENT_DIR!;

interface Principal {
  accountId: string;
  permissions: string[];
}
const keyCache = new Map<string, { principal: Principal | undefined; until: number }>();

async function authenticate(request: Request): Promise<Principal | undefined> {
  const token = request.headers.get("authorization")?.slice("Bearer ".length) ?? "";
  const keyHash = new Bun.CryptoHasher("sha256").update(token).digest("hex");
  const now = Date.now();
  const cached = keyCache.get(keyHash);
  if (cached && cached.until > now) return cached.principal;
  const [row] = await sql`select k.account_id, k.permissions, k.revoked_at, k.expires_at, a.rate_limit_per_minute
    from api_keys k inner join accounts a on k.account_id = a.id where k.key_hash = ${keyHash}`;
  const principal =
    row && row.revoked_at === null ? { accountId: row.account_id as string, permissions: row.permissions as string[] } : undefined;
  keyCache.set(keyHash, { principal, until: now + 500 });
  return principal;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const notFound = () => json({ success: false }, 404);

function metadata(row: any) {
  return {
    id: row.id,
    name: row.name,
    title: row.name,
    ...(row.description === null ? {} : { description: row.description }),
    tags: row.tags,
    folder: row.folder,
    fileSize: Number(row.file_size),
    version: row.content_version,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const contentPath = (key: string) => join(contentDir, key.slice(-2), `${key}.json`);

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  await handle.sync();
  await handle.close();
}

async function putContent(bytes: Uint8Array): Promise<{ key: string; hash: string }> {
  const key = Bun.randomUUIDv7();
  const folder = join(contentDir, key.slice(-2));
  await mkdir(folder, { recursive: true });
  const temp = join(folder, `${key}.tmp`);
  const handle = await open(temp, "wx", 0o640);
  await handle.write(bytes);
  await handle.sync();
  await handle.close();
  await rename(temp, contentPath(key));
  await syncPath(folder);
  return { key, hash: new Bun.CryptoHasher("sha256").update(bytes).digest("hex") };
}

const findActive = (accountId: string, id: string) =>
  sql`select * from documents where id = ${id} and account_id = ${accountId} and deleted_at is null`;

async function list(principal: Principal, url: URL): Promise<Response> {
  const limit = Number(url.searchParams.get("limit") ?? 50);
  // the columns the views show, as Kiln's listing reads them (statements.ts, pageViewStatement)
  const rows = await sql`select id, name, description, tags, folder, file_size, content_version, created_at, updated_at
    from documents where account_id = ${principal.accountId} and deleted_at is null order by created_at desc, id desc limit ${limit + 1}`;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const nextCursor = rows.length > limit && last ? Buffer.from(`${last.created_at}:${last.id}`).toString("base64url") : null;
  return json({ success: true, documents: page.map(metadata), nextCursor });
}

async function create(principal: Principal, request: Request): Promise<Response> {
  const body = (await request.json()) as { name: string; content: unknown };
  const bytes = new TextEncoder().encode(JSON.stringify(body.content));
  const stored = await putContent(bytes);
  const now = Date.now();
  // a create, as Kiln makes it: one call of kiln_create (its folders, document, first version, event and
  // storage reservation; drizzle/0018 and 0019), with no query index entries (the account declares no index)
  // and no schema check (p_unbound false: bare validates nothing)
  const [{ document: row }] =
    await sql`select kiln_create(${principal.accountId}, ${bytes.byteLength}, ${now}, ${[]}::text[], ${`doc_${Bun.randomUUIDv7()}`},
      ${body.name}, ${null}, ${[]}::text[], ${null}, ${stored.hash}, ${stored.key}, ${now}, ${[]}::text[], ${[]}::text[], ${[]}::text[], ${false}) as document`;
  return json({ success: true, document: metadata(row) }, 201);
}

async function replaceContent(principal: Principal, id: string, request: Request): Promise<Response> {
  const bytes = await request.bytes();
  const stored = await putContent(bytes);
  // a new version, as Kiln makes it: one call of kiln_new_version (drizzle/0005_new_version.sql)
  const [{ result }] =
    await sql`select kiln_new_version(${principal.accountId}, ${id}, ${null}, ${bytes.byteLength}, ${stored.hash}, ${stored.key}, ${Date.now()}, ${null}, ${[]}::text[], ${[]}::text[], ${[]}::text[], ${false}) as result`;
  if (result.outcome !== "stored") {
    await rm(contentPath(stored.key), { force: true });
    return notFound();
  }
  for (const key of result.released as string[]) await rm(contentPath(key), { force: true });
  return json({ success: true, fileSize: bytes.byteLength });
}

async function download(principal: Principal, id: string): Promise<Response> {
  const [row] = await findActive(principal.accountId, id);
  if (!row) return notFound();
  return new Response(Bun.file(contentPath(row.content_key)), {
    headers: { "content-type": "application/json", "content-disposition": `attachment; filename="${row.name}"` },
  });
}

/** The bare utility handler: parse, fill the config defaults, run, serialise, all on this thread. */
async function runUtility(id: string, request: Request): Promise<Response> {
  const utility = findUtility(id);
  if (!utility) return notFound();
  const body = JSON.parse(await request.text()) as { inputs: { primary: unknown; secondary?: unknown }; config?: object };
  const started = performance.now();
  const output = await utility.run(body.inputs, Value.Default(utility.configSchema, body.config ?? {}) as never);
  const durationMs = performance.now() - started;
  return new Response(`{"success":true,"output":${JSON.stringify(output)},"durationMs":${durationMs},"creditsUsed":1}`, {
    headers: { "content-type": "application/json" },
  });
}

/** One request, answered as the bare baseline answers it (exported for bench/request-cost.ts, which calls it in process). */
export async function handleBare(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/health") return new Response("ok");
  const principal = await authenticate(request);
  if (!principal) return json({ success: false }, 401);
  const parts = url.pathname.split("/"); // ["", "api", "v1", area, id?, sub?]
  if (parts[3] === "utilities" && request.method === "POST") return runUtility(parts[4], request);
  if (parts[3] === "plain" && request.method === "POST") return plainHandler(decodeURIComponent(parts[4]), request);
  if (parts[3] !== "documents") return notFound();
  const [id, sub] = [parts[4], parts[5]];
  if (id === undefined) return request.method === "POST" ? create(principal, request) : list(principal, url);
  if (sub === "content") return request.method === "PUT" ? replaceContent(principal, id, request) : download(principal, id);
  const [row] = await findActive(principal.accountId, id);
  return row ? json({ success: true, document: metadata(row) }) : notFound();
}

if (import.meta.main) {
  const server = Bun.serve({
    port: Number(process.env.PORT ?? 3001),
    hostname: "127.0.0.1",
    maxRequestBodySize: 1 << 30,
    fetch: handleBare,
  });
  process.on("SIGTERM", async () => {
    server.stop(true);
    await sql.end({ timeout: 1 });
    process.exit(0);
  });
}
