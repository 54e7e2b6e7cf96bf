/**
 * Section "schemas": what a folder's JSON Schema costs a write. Create and content replace of a 1 KB and a
 * 1 MB document into a governed folder against the same writes into an ungoverned folder of the same
 * account (which still pays the lookup of the account's bound folders), on the real server over loopback.
 * The two folders take turns, round by round, each round a fixed number of requests from a few concurrent
 * clients; each keeps its best round's requests/s (the machine is shared, so the best round is the one
 * least disturbed). Target: governed ≥ 0.9× ungoverned at 1 KB. The 1 MB document is validated in a
 * worker thread (over SCHEMA_INLINE_MAX_BYTES).
 *
 *   bun bench/run.ts --only schemas
 */

import { documentText, MB } from "./lib/data";
import { rows, rps, times } from "./lib/report";
import { ADMIN_KEY, api, startKiln } from "./lib/servers";
import type { Settings } from "./settings";

/** The records' schema: every field typed, required and bounded, a pattern on the e-mail. */
const RECORDS_SCHEMA = {
  type: "array",
  items: {
    type: "object",
    required: ["id", "name", "email", "age", "address", "orders"],
    properties: {
      id: { type: "integer", minimum: 1 },
      name: { type: "string", minLength: 1, maxLength: 200 },
      email: { type: "string", pattern: "^[^@\\s]+@[^@\\s]+$" },
      age: { type: "integer", minimum: 0, maximum: 150 },
      score: { type: "number", multipleOf: 0.01 },
      address: {
        type: "object",
        required: ["city"],
        properties: { city: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{5}$" }, geo: { type: "object" } },
      },
      tags: { type: "array", items: { type: "string" }, maxItems: 10 },
      orders: {
        type: "array",
        items: {
          type: "object",
          required: ["sku", "qty"],
          properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 }, price: { type: "number", minimum: 0 } },
        },
      },
      note: { type: "string" },
    },
    additionalProperties: false,
  },
};

interface Case {
  name: string;
  bytes: number;
  /** one write into `folder` (a create, or a replace of that folder's document) */
  request: (folder: string) => () => Promise<Response>;
}

/** Requests/s of `count` requests made by `clients` concurrent clients. */
async function throughput(request: () => Promise<Response>, count: number, clients: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next++ < count) {
        const response = await request();
        const text = await response.text();
        if (!response.ok) throw new Error(`bench schemas: ${response.status} ${text.slice(0, 300)}`);
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

export async function benchSchemas(settings: Settings): Promise<void> {
  const kiln = await startKiln("embedded");
  try {
    const { account } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/accounts", {
      name: "bench-schemas",
      rateLimitPerMinute: null,
      maxVersions: 2,
    });
    const { key } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/keys", { accountId: account.id, permissions: ["documents"] });
    await api(kiln.url, key, "POST", "/api/v1/schemas", { name: "records", schema: RECORDS_SCHEMA, folders: ["governed"] });
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const cases: Case[] = [];
    for (const bytes of [1024, MB]) {
      const content = documentText(bytes);
      const createBody = (folder: string) => `{"name":"doc","folder":"${folder}","content":${content}}`;
      const targets = new Map<string, string>();
      for (const folder of ["governed", "ungoverned"]) {
        const created = await fetch(`${kiln.url}/api/v1/documents`, { method: "POST", headers, body: createBody(folder) });
        if (created.status !== 201) throw new Error(`bench schemas: create ${created.status} ${await created.text()}`);
        targets.set(folder, ((await created.json()) as { document: { id: string } }).document.id);
      }
      const label = bytes === MB ? "1 MB" : "1 KB";
      cases.push({
        name: `create ${label}`,
        bytes,
        request: (folder) => () => fetch(`${kiln.url}/api/v1/documents`, { method: "POST", headers, body: createBody(folder) }),
      });
      cases.push({
        name: `content replace ${label}`,
        bytes,
        request: (folder) => () =>
          fetch(`${kiln.url}/api/v1/documents/${targets.get(folder)}/content`, { method: "PUT", headers, body: content }),
      });
    }
    const rounds = settings.full ? 7 : 4;
    for (const { name, bytes, request } of cases) {
      const count = bytes === MB ? (settings.full ? 40 : 16) : settings.full ? 2_000 : 600;
      const clients = bytes === MB ? 2 : 8;
      await throughput(request("governed"), Math.ceil(count / 4), clients); // warm-up of both paths
      await throughput(request("ungoverned"), Math.ceil(count / 4), clients);
      let governed = 0,
        ungoverned = 0;
      for (let round = 0; round < rounds; round++) {
        ungoverned = Math.max(ungoverned, await throughput(request("ungoverned"), count, clients));
        governed = Math.max(governed, await throughput(request("governed"), count, clients));
      }
      const ratio = governed / ungoverned;
      const small = bytes !== MB;
      rows.push({
        section: "schemas (embedded PG)",
        case: `${name}, governed folder`,
        kiln: rps(governed),
        reference: `ungoverned: ${rps(ungoverned)}`,
        ratio: `${times(ratio)} req/s`,
        ...(small ? { target: "≥ 0.9", met: ratio >= 0.9 } : {}),
      });
      console.error(
        `bench: schemas ${name}: governed ${rps(governed)} vs ungoverned ${rps(ungoverned)} (${times(ratio)}), best of ${rounds}`,
      );
    }
  } finally {
    await kiln.stop();
  }
}
