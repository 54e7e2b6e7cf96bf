/**
 * The multi-node suite (issue 11): three real Kiln processes on ONE fresh database on the PostgreSQL
 * server (127.0.0.1:5432 unless TEST_DATABASE_URL names another), one bucket (an s3rver the suite starts,
 * or TEST_S3_ENDPOINT; CLUSTER_CONTENT_STORE=disk shares one content folder instead), and the machine's
 * Redis under a unique prefix. Requests are spread over the nodes as a load balancer would spread them.
 * Run by `bun run test:cluster` (CI: its own block in .ci/run); not part of plain `bun test`, which must
 * also pass where no PostgreSQL server or Redis runs.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { SseReader } from "../modules/events/sse";
import { type Cluster, startCluster } from "../support/cluster";
import type { RunningServer } from "../support/server";

setDefaultTimeout(120_000); // real processes on a shared, loaded machine
const NODES = 3;
const CONTENT_STORE = process.env.CLUSTER_CONTENT_STORE === "disk" ? "disk" : "s3";
const PURGE_AFTER_MS = 1500;
let cluster: Cluster;
let requests = 0;
let kills = 0;
const violations: string[] = [];
const violation = (message: string) => {
  violations.push(message);
};

beforeAll(async () => {
  cluster = await startCluster({
    nodes: NODES,
    contentStore: CONTENT_STORE,
    env: { LOG_LEVEL: "info", SWEEP_INTERVAL_MS: "200", PURGE_AFTER_MS: String(PURGE_AFTER_MS), JOBS_CHUNK_SIZE: "20" },
  });
}, 120_000);

afterAll(async () => {
  console.log(
    `multi-node (${CONTENT_STORE} store): ${requests} requests over ${NODES} nodes, ${kills} kill(s), ${violations.length} violation(s)`,
  );
  for (const found of violations) console.log(`  VIOLATION ${found}`);
  for (const node of cluster?.nodes ?? [])
    for (const line of node.output().split("\n"))
      if (line.includes('"level":"warn"') || line.includes('"level":"error"')) console.log(`  node log: ${line.slice(0, 300)}`);
  await cluster?.close();
});

function call(
  node: RunningServer,
  method: string,
  path: string,
  key: string,
  body?: string | object,
  headers: Record<string, string> = {},
): Promise<Response> {
  requests++;
  const text = body === undefined || typeof body === "string" ? body : JSON.stringify(body);
  return fetch(node.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(text !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: text,
    signal: AbortSignal.timeout(30_000),
  });
}

const sha256 = (bytes: string | Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const DOCS = "/api/v1/documents";

function contentOf(seq: number): string {
  return `{"seq":${seq},"big":123456789012345678901234567890,"f":1.0,"text":"Zoë ✓ ${"x".repeat(seq % 500)}"}`;
}

test("read-after-write across nodes: what one node acknowledges, every other node serves at once, byte for byte", async () => {
  const { key } = await cluster.newAccount();
  let checks = 0;
  for (let i = 0; i < 45; i++) {
    const writer = cluster.node(i);
    const content = contentOf(i);
    const created = await call(writer, "POST", DOCS, key, `{"name":"raw-${i}","content":${content}}`);
    const { document } = (await created.json()) as any;
    if (created.status !== 201) {
      violation(`create on node ${i % NODES} answered ${created.status}`);
      continue;
    }
    for (let offset = 1; offset < NODES; offset++) {
      const reader = cluster.node(i + offset);
      const meta = await call(reader, "GET", `${DOCS}/${document.id}`, key);
      if (meta.status !== 200) violation(`metadata of ${document.id} written on one node answered ${meta.status} on another`);
      await meta.body?.cancel();
      const download = await call(reader, "GET", `${DOCS}/${document.id}/content`, key);
      const bytes = new Uint8Array(await download.arrayBuffer());
      if (new TextDecoder().decode(bytes) !== content || download.headers.get("etag") !== `"${sha256(content)}"`)
        violation(`content of ${document.id} differs on another node`);
      checks++;
    }
    // replace on the next node, read on the one after
    const replacement = contentOf(i + 1000);
    const replaced = await call(cluster.node(i + 1), "PUT", `${DOCS}/${document.id}/content`, key, replacement);
    await replaced.body?.cancel();
    const after = await call(cluster.node(i + 2), "GET", `${DOCS}/${document.id}/content`, key);
    if (replaced.status !== 200 || (await after.text()) !== replacement)
      violation(`replacement of ${document.id} not seen on another node`);
    checks++;
  }
  expect(checks).toBe(45 * NODES);
  expect(violations).toEqual([]);
});

test("storage quota exact under concurrent creates spread over the nodes", async () => {
  const document = `{"pad":"${"q".repeat(990)}"}`; // 1,000 bytes
  expect(document.length).toBe(1000);
  const { key } = await cluster.newAccount({ storageLimitBytes: 10_000, maxDocumentBytes: null });
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => call(cluster.node(i), "POST", DOCS, key, `{"name":"q${i}","content":${document}}`)),
  );
  const statuses = answers.map((answer) => answer.status);
  await Promise.all(answers.map((answer) => answer.body?.cancel()));
  expect(statuses.filter((status) => status === 201).length).toBe(10);
  expect(statuses.filter((status) => status === 413).length).toBe(50);
  for (const node of cluster.nodes) {
    const usage = (await (await call(node, "GET", "/api/v1/usage", key)).json()) as any;
    expect(usage.storage.usedBytes).toBe(10_000);
  }
});

test("utility credits exact under concurrent runs spread over the nodes", async () => {
  const { key } = await cluster.newAccount({ monthlyCredits: 25 }, ["utilities"]);
  const body = { inputs: { primary: { a: { x: 1 } }, secondary: { a: { y: 2 } } } };
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => call(cluster.node(i), "POST", "/api/v1/utilities/merge.deep-merge", key, body)),
  );
  const statuses = answers.map((answer) => answer.status);
  await Promise.all(answers.map((answer) => answer.body?.cancel()));
  expect(statuses.filter((status) => status === 200).length).toBe(25);
  expect(statuses.filter((status) => status === 402).length).toBe(35);
  for (const node of cluster.nodes) {
    const usage = (await (await call(node, "GET", "/api/v1/usage", key)).json()) as any;
    expect(usage.credits.used).toBe(25);
  }
});

test("one rate limit for the whole cluster: an account's requests on all nodes draw from one bucket", async () => {
  const { key } = await cluster.newAccount({ rateLimitPerMinute: 30 });
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: 90 }, (_, i) => call(cluster.node(i), "GET", "/api/v1/usage", key)));
  const elapsedMs = performance.now() - started;
  const statuses = answers.map((answer) => answer.status);
  await Promise.all(answers.map((answer) => answer.body?.cancel()));
  const allowed = statuses.filter((status) => status === 200).length;
  // 30 in the bucket, plus what refilled while the burst ran (one every 2 s); per-node counting would allow 90
  expect(allowed).toBeGreaterThanOrEqual(30);
  expect(allowed).toBeLessThanOrEqual(30 + Math.ceil(elapsedMs / 2000));
  expect(statuses.filter((status) => status === 429).length).toBe(90 - allowed);
  const refused = answers.find((answer) => answer.status === 429)!;
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
});

test("a key revoked on one node answers 401 on every node within a second", async () => {
  const { key, keyId } = await cluster.newAccount();
  for (const node of cluster.nodes) expect((await call(node, "GET", "/api/v1/usage", key)).status).toBe(200); // caches warm
  const revoked = await call(cluster.nodes[0], "DELETE", `/api/v1/admin/keys/${keyId}`, cluster.bootstrapKey);
  expect(revoked.status).toBe(200);
  const revokedAt = performance.now();
  const firstRefusal: number[] = [];
  for (const node of cluster.nodes) {
    let status = 200;
    while (status === 200 && performance.now() - revokedAt < 1000) {
      status = (await call(node, "GET", "/api/v1/usage", key)).status;
      if (status === 200) await Bun.sleep(20);
    }
    firstRefusal.push(performance.now() - revokedAt);
  }
  await Bun.sleep(Math.max(0, 1000 - (performance.now() - revokedAt)));
  // a second after the revocation was acknowledged, no node accepts the key
  for (const node of cluster.nodes) {
    const answer = await call(node, "GET", "/api/v1/usage", key);
    if (answer.status !== 401) violation(`revoked key answered ${answer.status} on a node 1 s after the revocation`);
    expect(answer.status).toBe(401);
  }
  console.log(`revocation seen by all ${NODES} nodes within ${Math.round(Math.max(...firstRefusal))} ms`);
});

test("each due purge is done once by the cluster's sweepers; storage counters stay exact", async () => {
  const { key } = await cluster.newAccount();
  const purgedBefore = purgedInLogs();
  let kept = 0;
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const content = contentOf(i);
    const created = (await (await call(cluster.node(i), "POST", DOCS, key, `{"name":"p${i}","content":${content}}`)).json()) as any;
    ids.push(created.document.id);
  }
  for (let i = 0; i < 5; i++) kept += Buffer.byteLength(contentOf(i + 30));
  for (let i = 0; i < 5; i++)
    await (await call(cluster.node(i), "POST", DOCS, key, `{"name":"k${i}","content":${contentOf(i + 30)}}`)).body?.cancel();
  for (const [i, id] of ids.entries()) expect((await call(cluster.node(i + 1), "DELETE", `${DOCS}/${id}`, key)).status).toBe(200);
  let left = ids.length;
  for (let waited = 0; left > 0 && waited < 30_000; waited += 200) {
    await Bun.sleep(200);
    left = ((await (await call(cluster.node(waited / 200), "GET", `${DOCS}?deleted=true&limit=200`, key)).json()) as any).documents.length;
  }
  expect(left).toBe(0);
  await Bun.sleep(500); // log lines of the last sweep
  expect(purgedInLogs() - purgedBefore).toBe(30);
  for (const node of cluster.nodes) {
    const usage = (await (await call(node, "GET", "/api/v1/usage", key)).json()) as any;
    expect(usage.storage.usedBytes).toBe(kept);
  }
  for (const id of ids) expect((await call(cluster.node(0), "POST", `${DOCS}/${id}/restore`, key)).status).toBe(404);
});

test("folder counts stay exact under concurrent creates, moves, deletes, restores and imports spread over the nodes", async () => {
  const { key } = await cluster.newAccount();
  const FOLDERS = ["a", "a/b", "c"];
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const created = await call(cluster.node(i), "POST", DOCS, key, { name: `f${i}`, folder: FOLDERS[i % 3], content: { i } });
    ids.push(((await created.json()) as any).document.id);
  }
  const writes: Promise<Response>[] = [];
  for (let i = 0; i < 30; i++)
    writes.push(call(cluster.node(i + 1), "POST", DOCS, key, { name: `n${i}`, folder: FOLDERS[(i + 1) % 3], content: { i } }));
  for (const [i, id] of ids.slice(0, 10).entries())
    writes.push(call(cluster.node(i), "PUT", `${DOCS}/${id}`, key, { folder: FOLDERS[(i + 2) % 3] }));
  for (const [i, id] of ids.slice(10, 20).entries()) writes.push(call(cluster.node(i + 2), "DELETE", `${DOCS}/${id}`, key));
  const lines = Array.from({ length: 10 }, (_, i) => JSON.stringify({ document: { name: `imp${i}`, folder: "c" }, content: { i } })).join(
    "\n",
  );
  writes.push(call(cluster.node(0), "POST", "/api/v1/import", key, `${lines}\n`, { "content-type": "application/x-ndjson" }));
  const answered = await Promise.all(writes);
  for (const response of answered) {
    if (!response.ok) violation(`a folder write answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    else await response.arrayBuffer();
  }
  // half of the deleted ones come back, on other nodes, before the sweepers purge the rest
  const restored = await Promise.all(ids.slice(10, 15).map((id, i) => call(cluster.node(i), "POST", `${DOCS}/${id}/restore`, key)));
  for (const response of restored) expect(response.status).toBe(200);

  const recount: Record<string, number> = {};
  let cursor = "";
  do {
    const page = (await (await call(cluster.node(1), "GET", `${DOCS}?limit=200${cursor ? `&cursor=${cursor}` : ""}`, key)).json()) as any;
    for (const document of page.documents) if (document.folder) recount[document.folder] = (recount[document.folder] ?? 0) + 1;
    cursor = page.nextCursor ?? "";
  } while (cursor);
  expect(Object.values(recount).reduce((sum, n) => sum + n, 0)).toBe(30 + 30 - 10 + 5 + 10);
  for (const node of cluster.nodes) {
    const { folders } = (await (await call(node, "GET", "/api/v1/folders", key)).json()) as any;
    const counts = Object.fromEntries(
      folders.map((folder: { path: string; documentCount: number }) => [folder.path, folder.documentCount]),
    );
    expect(counts).toEqual({ a: recount.a ?? 0, "a/b": recount["a/b"] ?? 0, c: recount.c ?? 0 });
  }
});

/** Documents the nodes' sweepers report having purged, over all nodes (each logs what its statement deleted). */
function purgedInLogs(): number {
  let purged = 0;
  for (const node of cluster.nodes) {
    for (const line of node.output().split("\n")) {
      if (line.includes('"msg":"purged due documents"')) purged += JSON.parse(line).purged;
    }
  }
  return purged;
}

interface Tracked {
  id: string;
  acked: string;
  pending?: string;
}

test("a node SIGKILLed under load loses no acknowledged write; the others keep serving", async () => {
  // one version kept (the current one), so the storage figure is the sum of the documents' bytes
  const { key } = await cluster.newAccount({ maxVersions: 1 });
  const victim = cluster.nodes[NODES - 1];
  const live = () => cluster.nodes.filter((node) => node !== victim || (victim.proc.exitCode === null && victim.proc.signalCode === null));
  const tracked = new Map<string, Tracked>();
  const pendingCreates = new Map<string, string>();
  let acknowledged = 0;
  let afterKill = 0;
  let seq = 0;
  let killed = false;
  const stop = { now: false };

  const client = async (clientId: number) => {
    for (let turn = clientId; !stop.now; turn++) {
      const nodes = live();
      const node = nodes[turn % nodes.length];
      const onVictim = node === victim;
      const mine = [...tracked.values()].filter(
        (doc) => doc.id.startsWith("doc_") && doc.pending === undefined && (doc as Tracked & { owner: number }).owner === clientId,
      );
      const bytes = contentOf(++seq);
      try {
        if (mine.length < 3 || turn % 3 === 0) {
          const name = `w${clientId}-${seq}`;
          pendingCreates.set(name, bytes);
          const answer = await call(node, "POST", DOCS, key, `{"name":"${name}","content":${bytes}}`);
          const body = (await answer.json()) as any;
          if (answer.status !== 201) {
            violation(`create answered ${answer.status} ${JSON.stringify(body).slice(0, 120)}`);
            continue;
          }
          pendingCreates.delete(name);
          tracked.set(body.document.id, Object.assign({ id: body.document.id, acked: bytes }, { owner: clientId }));
        } else {
          const doc = mine[turn % mine.length];
          doc.pending = bytes;
          const answer = await call(node, "PUT", `${DOCS}/${doc.id}/content`, key, bytes);
          await answer.body?.cancel();
          if (answer.status !== 200) {
            violation(`replace answered ${answer.status}`);
            continue;
          }
          doc.acked = bytes;
          doc.pending = undefined;
        }
        acknowledged++;
        if (killed) afterKill++;
      } catch (error) {
        // only the killed node may fail to answer; the write stays in flight (done or not)
        if (!onVictim) violation(`a live node did not answer: ${(error as Error).message}`);
      }
    }
  };

  const clients = Array.from({ length: 6 }, (_, i) => client(i));
  for (let waited = 0; acknowledged < 150 && waited < 30_000; waited += 10) await Bun.sleep(10);
  victim.proc.kill("SIGKILL");
  await victim.proc.exited;
  killed = true;
  kills++;
  const ackedAtKill = acknowledged;
  for (let waited = 0; afterKill < 150 && waited < 30_000; waited += 10) await Bun.sleep(10);
  stop.now = true;
  await Promise.all(clients);
  expect(afterKill).toBeGreaterThanOrEqual(150); // the others kept serving
  expect(ackedAtKill).toBeGreaterThan(0);

  // verify through each surviving node: every acknowledged write is there, nothing unknown appeared
  const [first, second] = live();
  const listed = new Map<string, { name: string; fileSize: number }>();
  let cursor: string | null = null;
  do {
    const page = (await (await call(first, "GET", `${DOCS}?limit=200${cursor ? `&cursor=${cursor}` : ""}`, key)).json()) as any;
    for (const doc of page.documents) listed.set(doc.id, doc);
    cursor = page.nextCursor;
  } while (cursor);
  for (const [id, doc] of listed) {
    if (tracked.has(id)) continue;
    const bytes = pendingCreates.get(doc.name);
    if (bytes === undefined) violation(`document ${id} (${doc.name}) was never written by a client`);
    else tracked.set(id, { id, acked: bytes });
  }
  let sum = 0;
  for (const doc of tracked.values()) {
    if (!listed.has(doc.id)) {
      violation(`acknowledged document ${doc.id} is missing`);
      continue;
    }
    const texts = await Promise.all(
      [first, second].map(async (node) => (await call(node, "GET", `${DOCS}/${doc.id}/content`, key)).text()),
    );
    if (texts[0] !== texts[1]) violation(`${doc.id} differs between the surviving nodes`);
    if (texts[0] !== doc.acked && texts[0] !== doc.pending) violation(`${doc.id} holds neither its acknowledged nor its in-flight content`);
    sum += Buffer.byteLength(texts[0]);
  }
  const usage = (await (await call(second, "GET", "/api/v1/usage", key)).json()) as any;
  expect(usage.storage.usedBytes).toBe(sum);
  expect(violations).toEqual([]);
  // a replacement node joins and serves what the cluster holds
  const replacement = await cluster.addNode();
  const sample = [...tracked.values()][0];
  const served = await (await call(replacement, "GET", `${DOCS}/${sample.id}/content`, key)).text();
  expect(served).toBe(await (await call(first, "GET", `${DOCS}/${sample.id}/content`, key)).text());
  console.log(
    `kill: ${ackedAtKill} writes acknowledged before the SIGKILL, ${afterKill} after it by the ${NODES - 1} other nodes, ${tracked.size} documents checked`,
  );
});

test("an event stream on one node receives the events of writes made on the other two (LISTEN/NOTIFY fan-out), complete and in cursor order", async () => {
  const { key } = await cluster.newAccount();
  const [a, b, c] = cluster.nodes.filter((node) => node.proc.exitCode === null && node.proc.signalCode === null);
  const aborter = new AbortController();
  const response = await fetch(`${a.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}` }, signal: aborter.signal });
  expect(response.status).toBe(200);
  const stream = new SseReader(response.body!);
  await stream.until((reader) => reader.frames.length > 0); // `retry:`: the stream is open
  // four writers, two on each of the other nodes, at once: creates, then a rename of each
  const acknowledged = new Map<string, number>();
  await Promise.all(
    [b, c, b, c].map(async (node, writer) => {
      for (let i = 0; i < 30; i++) {
        const created = await call(node, "POST", DOCS, key, { name: `w${writer}-${i}`, content: { writer, i } });
        expect(created.status).toBe(201);
        const { document } = (await created.json()) as any;
        acknowledged.set(`${document.id} document.created`, performance.now());
        const renamed = await call(node, "PUT", `${DOCS}/${document.id}`, key, { name: `w${writer}-${i}-renamed` });
        expect(renamed.status).toBe(200);
        await renamed.body?.cancel();
        acknowledged.set(`${document.id} document.updated`, performance.now());
      }
    }),
  );
  await stream.until((reader) => reader.events.length >= acknowledged.size, 15_000);
  await Bun.sleep(500); // nothing more comes
  aborter.abort();
  const received = stream.events.map((event) => `${event.data.document.id} ${event.type}`);
  expect(received.length).toBe(acknowledged.size);
  expect(new Set(received)).toEqual(new Set(acknowledged.keys()));
  // in cursor order, the order of GET /api/v1/events on any node
  const listed: string[] = [];
  for (let after = ""; ; ) {
    const page = (await (await call(c, "GET", `/api/v1/events?limit=500${after ? `&after=${after}` : ""}`, key)).json()) as any;
    listed.push(...page.events.map((event: any) => event.cursor));
    after = page.nextCursor;
    if (!page.hasMore) break;
  }
  expect(stream.events.map((event) => event.cursor)).toEqual(listed);
  const position = (cursor: string) => cursor.split("-").map(Number);
  for (let i = 1; i < listed.length; i++) {
    const [tx0, seq0] = position(listed[i - 1]);
    const [tx1, seq1] = position(listed[i]);
    expect(tx1 > tx0 || (tx1 === tx0 && seq1 > seq0)).toBe(true);
  }
  const latencies = stream.frames
    .filter((frame) => frame.data !== undefined)
    .map((frame) => {
      const event = JSON.parse(frame.data!);
      return Math.max(0, frame.at - acknowledged.get(`${event.data.document.id} ${event.type}`)!);
    })
    .sort((x, y) => x - y);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))].toFixed(1);
  console.log(
    `event stream on one node, writes on two others: ${latencies.length} events, after the write's answer median ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`,
  );
  expect(latencies.at(-1)!).toBeLessThan(3000);
});

test("webhooks: every event is delivered at least once, with its one webhook-id, when a node is SIGKILLed in the middle of its deliveries", async () => {
  const { startServer } = await import("../support/server");
  const { startReceiver } = await import("../modules/webhooks/support");
  // nodes of this test's own: webhooks to 127.0.0.1, a 1 s timeout (a lease of 3 s), a short schedule
  for (const node of cluster.nodes) await node.stop("SIGTERM");
  const env = {
    ...cluster.env,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_RETRY_SCHEDULE_MS: "0,200,200,200,200,200,200,200",
    WEBHOOK_ENDPOINT_CONCURRENCY: "12",
  };
  const nodes = await Promise.all([0, 1, 2].map(() => startServer(env)));
  cluster.nodes.splice(0, cluster.nodes.length, ...nodes); // the stopped ones need no closing
  const receiver = startReceiver();
  receiver.answer = async () => {
    await Bun.sleep(300); // attempts stay in flight long enough for the kill to catch some
    return new Response(null, { status: 200 });
  };
  try {
    const { key } = await cluster.newAccount({}, ["documents", "webhooks"]);
    const created = await call(nodes[0], "POST", "/api/v1/webhooks", key, { url: receiver.url });
    expect(created.status).toBe(201);
    const webhookId = ((await created.json()) as any).webhook.id;
    const victim = nodes[2];
    let written = 0;
    await Promise.all(
      [0, 1, 2, 3].map(async (writer) => {
        for (let i = 0; i < 40; i++) {
          if (writer === 0 && i === 20) victim.proc.kill("SIGKILL");
          const live = nodes.filter((node) => node.proc.exitCode === null && node.proc.signalCode === null);
          try {
            const answer = await call(live[(writer + i) % live.length], "POST", DOCS, key, { name: `h${writer}-${i}`, content: i });
            if (answer.status === 201) written++;
            await answer.body?.cancel();
          } catch {} // a write in flight on the killed node: the feed below says whether it happened
        }
      }),
    );
    // every acknowledged write has its event, and the delivery loop fans each out to a delivery (after the
    // commit, at its next turn): each reaches the receiver
    const survivor = nodes[0];
    const allDeliveries = async () => {
      const found: any[] = [];
      for (let cursor = ""; ; ) {
        const path = `/api/v1/webhooks/${webhookId}/deliveries?limit=200${cursor ? `&cursor=${cursor}` : ""}`;
        const page = (await (await call(survivor, "GET", path, key)).json()) as any;
        found.push(...page.deliveries);
        if (!page.nextCursor) return found;
        cursor = page.nextCursor;
      }
    };
    let deliveries = await allDeliveries();
    for (const deadline = Date.now() + 10_000; deliveries.length < written && Date.now() < deadline; ) {
      await Bun.sleep(100);
      deliveries = await allDeliveries();
    }
    expect(deliveries.length).toBeGreaterThanOrEqual(written);
    const events = deliveries.map((delivery) => delivery.eventId as string);
    const received = () => new Set(receiver.received.map((request) => request.headers["webhook-id"]));
    const deadline = Date.now() + 30_000;
    while (events.some((id) => !received().has(id)) && Date.now() < deadline) await Bun.sleep(100);
    expect(events.filter((id) => !received().has(id))).toEqual([]);
    // every delivery succeeded; the victim's claims were taken over once their lease ended
    for (let i = 0; i < 50 && deliveries.some((delivery) => delivery.status !== "succeeded"); i++) {
      await Bun.sleep(100);
      deliveries = await allDeliveries();
    }
    expect(deliveries.filter((delivery) => delivery.status !== "succeeded")).toEqual([]);
    const abandoned = deliveries.filter((delivery) =>
      delivery.attemptLog.some((attempt: any) => attempt.error?.startsWith("abandoned")),
    ).length;
    const duplicates = receiver.received.length - received().size;
    console.log(
      `webhooks under a node kill: ${events.length} events (${written} writes acknowledged), all delivered; ${abandoned} claims of the killed node taken over after their lease, ${duplicates} duplicate deliveries (same webhook-id)`,
    );
  } finally {
    receiver.stop();
    // the tests after this one work on three live nodes
    const killed = cluster.nodes.findIndex((node) => node.proc.exitCode !== null || node.proc.signalCode !== null);
    if (killed >= 0) cluster.nodes[killed] = await startServer(env);
  }
});

/** `count` documents imported into `folder` through node 0 (one NDJSON request), their ids in order. */
async function importInto(key: string, folder: string, count: number, content: (i: number) => unknown): Promise<string[]> {
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ document: { name: `d${i}`, folder }, content: content(i) }));
  const imported = await call(cluster.node(0), "POST", "/api/v1/import", key, `${lines.join("\n")}\n`, {
    "content-type": "application/x-ndjson",
  });
  return (await imported.text())
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { id: string }).id);
}

test("one job across the three nodes: each takes chunks of it, every document gets exactly one new version", async () => {
  const { key } = await cluster.newAccount();
  const count = 600;
  const ids = await importInto(key, "cluster-job", count, (i) => ({ i, e: `u${i}@example.com` }));
  const submitted = await call(cluster.node(1), "POST", "/api/v1/jobs", key, {
    source: { folder: "cluster-job" },
    utility: "cleanup.redact",
    config: { patterns: ["email"] },
    output: { mode: "newVersion" },
  });
  expect(submitted.status).toBe(202);
  const { job } = (await submitted.json()) as { job: { id: string } };
  let state: any;
  for (let i = 0; ; i++) {
    state = ((await (await call(cluster.node(i), "GET", `/api/v1/jobs/${job.id}`, key)).json()) as any).job;
    if (["succeeded", "failed", "cancelled"].includes(state.state)) break;
    await Bun.sleep(50);
  }
  expect(state).toMatchObject({
    state: "succeeded",
    progress: { total: count, processed: count, succeeded: count, failed: 0, skipped: 0 },
  });
  const results = (await (await call(cluster.node(2), "GET", `/api/v1/jobs/${job.id}/results`, key)).text())
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(results.map((line) => line.documentId)).toEqual(ids);
  expect(results.every((line) => line.status === "succeeded" && line.version === 2)).toBe(true);
  for (const [i, id] of ids.entries()) {
    const versions = (await (await call(cluster.node(i), "GET", `${DOCS}/${id}/versions`, key)).json()) as any;
    if (versions.versions.length !== 2) violation(`${id}: ${versions.versions.length} versions after the job`);
  }
  // every node took part: each logged chunks of this job
  const chunksOf = (node: RunningServer) =>
    node
      .output()
      .split("\n")
      .filter((line) => line.includes('"job chunk done"') && line.includes(job.id)).length;
  const perNode = cluster.nodes.map(chunksOf);
  console.log(`multi-node job: ${count} documents, chunks per node ${perNode.join(", ")}`);
  expect(perNode.every((chunks) => chunks > 0)).toBe(true);
  expect(violations).toEqual([]);
});

test("an index built across the three nodes (a job of kind indexBuild): each takes chunks of it, every node's queries answer the same", async () => {
  const { key } = await cluster.newAccount();
  const count = 600;
  const ids = await importInto(key, "cluster-index", count, (i) => ({ i, k: i % 3 }));
  const made = await call(cluster.node(1), "POST", "/api/v1/indexes", key, {
    folder: "cluster-index",
    fields: [{ path: "/k" }, { path: "/i" }],
  });
  expect(made.status).toBe(202);
  const { index } = (await made.json()) as { index: { id: string } };
  let state: any;
  for (let i = 0; ; i++) {
    state = ((await (await call(cluster.node(i), "GET", `/api/v1/indexes/${index.id}`, key)).json()) as any).index;
    if (state.state !== "building") break;
    await Bun.sleep(50);
  }
  expect(state).toMatchObject({ state: "ready", progress: { processed: count, total: count } });
  const jobs = ((await (await call(cluster.node(2), "GET", "/api/v1/jobs", key)).json()) as any).jobs;
  const build = jobs.find((job: { kind: string }) => job.kind === "indexBuild");
  expect(build).toMatchObject({ state: "succeeded", progress: { total: count, succeeded: count } });
  const answers: string[][] = [];
  for (const node of cluster.nodes) {
    const page = await call(node, "POST", `${DOCS}/query`, key, {
      folder: "cluster-index",
      filter: { "/k": 1 },
      sort: [{ path: "/i" }],
      limit: 1000,
    });
    answers.push(((await page.json()) as any).documents.map((document: { id: string }) => document.id));
  }
  const expected = ids.filter((_, i) => i % 3 === 1);
  for (const answer of answers) expect(answer).toEqual(expected);
  const chunksOf = (node: RunningServer) =>
    node
      .output()
      .split("\n")
      .filter((line) => line.includes('"job chunk done"') && line.includes(build.id)).length;
  const perNode = cluster.nodes.map(chunksOf);
  console.log(`multi-node index build: ${count} documents, chunks per node ${perNode.join(", ")}`);
  expect(perNode.every((chunks) => chunks > 0)).toBe(true);
});
