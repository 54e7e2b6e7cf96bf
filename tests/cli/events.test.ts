/**
 * `kiln events tail` against real servers: two nodes on one database (writes go to one, the tail follows
 * the other), a node restarted and a connection cut mid-stream while writes go on; what the tail printed
 * must be exactly the feed, in cursor order, none missed and none twice.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { freePort, type RunningServer, removeDataDir, startServer, tempDataDir } from "../support/server";
import { startTcpProxy } from "../support/tcp-proxy";
import { CLI } from "./support";

setDefaultTimeout(90_000);

const BOOTSTRAP = `kiln_EventsTail${Bun.randomUUIDv7().replaceAll("-", "")}`;
let database: TestDatabase;
let dataDir: string;
let env: Record<string, string>;
let tailed: RunningServer; // the node the tail follows (restarted by a test)
let writer: RunningServer; // the node that takes the writes
const tailedPort = String(freePort());

beforeAll(async () => {
  database = await createTestDatabase();
  await database.database.close();
  dataDir = tempDataDir();
  env = { DATA_DIR: dataDir, DATABASE_URL: database.url, BOOTSTRAP_API_KEY: BOOTSTRAP, EVENTS_HEARTBEAT_MS: "200", DATABASE_POOL_MAX: "5" };
  [tailed, writer] = await Promise.all([startServer({ ...env, PORT: tailedPort }), startServer(env)]);
});
afterAll(async () => {
  await Promise.all([tailed?.stop("SIGKILL"), writer?.stop("SIGKILL")]);
  await database?.drop();
  await removeDataDir(dataDir);
});

async function api(method: string, path: string, key: string, body?: unknown): Promise<any> {
  const response = await fetch(writer.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  return response.json();
}

async function newKey(): Promise<string> {
  const { account } = await api("POST", "/api/v1/admin/accounts", BOOTSTRAP, {
    name: `tail-${Bun.randomUUIDv7()}`,
    rateLimitPerMinute: null,
  });
  return (await api("POST", "/api/v1/admin/keys", BOOTSTRAP, { accountId: account.id, permissions: ["documents"] })).key;
}

/** Every event of the key's account, as GET /api/v1/events lists them. */
async function feed(key: string): Promise<any[]> {
  const events: any[] = [];
  let after = "";
  for (;;) {
    const page = await api("GET", `/api/v1/events?limit=500${after ? `&after=${after}` : ""}`, key);
    events.push(...page.events);
    after = page.nextCursor;
    if (!page.hasMore) return events;
  }
}

interface Tail {
  lines(): string[];
  stderr(): string;
  until(condition: () => boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<number>;
  exited: Promise<number>;
}

function tail(args: string[], url: string, key: string): Tail {
  const proc = Bun.spawn(["bun", CLI, ...args], {
    env: { ...(process.env as Record<string, string>), KILN_URL: url, KILN_KEY: key },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdout = "";
  let stderr = "";
  void (async () => {
    for await (const chunk of proc.stdout) stdout += new TextDecoder().decode(chunk);
  })();
  void (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  return {
    lines: () => stdout.split("\n").filter((line) => line !== ""),
    stderr: () => stderr,
    async until(condition, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out; stdout:\n${stdout.slice(-2000)}\nstderr:\n${stderr}`);
        await Bun.sleep(20);
      }
    },
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
    exited: proc.exited,
  };
}

/** Creates documents one after another until stopped; resolves to their names. */
function keepWriting(key: string, prefix: string): { stop(): Promise<string[]> } {
  const names: string[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      const name = `${prefix}-${i}`;
      await api("POST", "/api/v1/documents", key, { name, content: { i } });
      names.push(name);
      await Bun.sleep(15);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return names;
    },
  };
}

/** The tail printed exactly the feed: every event once, in cursor order. */
async function expectExactlyTheFeed(printed: string[], key: string, written: string[]): Promise<void> {
  const events = printed.map((line) => JSON.parse(line));
  const expected = await feed(key);
  expect(expected.map((event) => event.data.document.name)).toEqual(written);
  expect(events.map((event) => event.cursor)).toEqual(expected.map((event) => event.cursor));
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
}

describe("kiln events tail", () => {
  test("the node it follows is killed and restarted mid-stream while writes go on elsewhere: it backs off, reconnects after the last event printed, and prints every event exactly once", async () => {
    const key = await newKey();
    const follower = tail(["--json", "events", "tail"], tailed.url, key);
    const writes = keepWriting(key, "restart");
    await follower.until(() => follower.lines().length >= 10);
    await tailed.stop("SIGKILL"); // the connection is cut, no goodbye
    const killedAt = Date.now();
    // down long enough for a reconnection to fail and the next one to wait longer
    await follower.until(() => /cannot reach/.test(follower.stderr()), 15_000);
    await Bun.sleep(500);
    tailed = await startServer({ ...env, PORT: tailedPort });
    const downMs = Date.now() - killedAt;
    await Bun.sleep(1000);
    const written = await writes.stop();
    await follower.until(() => follower.lines().length >= written.length, 30_000);
    await Bun.sleep(500); // nothing more comes
    expect(await follower.stop()).not.toBe(1);
    await expectExactlyTheFeed(follower.lines(), key, written);
    const delays = [...follower.stderr().matchAll(/reconnecting in ([\d.]+) s/g)].map((match) => Number(match[1]));
    console.log(`tail across a restart: ${written.length} events, node down ${downMs} ms, reconnections after ${delays.join(", ")} s`);
    expect(follower.stderr()).toContain("the connection was lost");
    expect(follower.stderr()).toMatch(/reconnecting in [\d.]+ s after \d+\.\d+/);
    expect(delays.length).toBeGreaterThanOrEqual(2);
    expect(delays[1]).toBeGreaterThan(delays[0]); // backs off while the node is down
  });

  test("a connection cut in the middle (a proxy going down and up) while writes go on: nothing missed, nothing twice", async () => {
    const key = await newKey();
    const proxy = startTcpProxy({ hostname: "127.0.0.1", port: Number(new URL(tailed.url).port) });
    try {
      const follower = tail(["--json", "events", "tail"], `http://127.0.0.1:${proxy.port}`, key);
      const writes = keepWriting(key, "cut");
      for (let cut = 0; cut < 2; cut++) {
        const seen = follower.lines().length;
        await follower.until(() => follower.lines().length >= seen + 8);
        proxy.down();
        await Bun.sleep(700);
        proxy.up();
      }
      await Bun.sleep(500);
      const written = await writes.stop();
      await follower.until(() => follower.lines().length >= written.length, 30_000);
      await Bun.sleep(500);
      await follower.stop();
      await expectExactlyTheFeed(follower.lines(), key, written);
      expect([...follower.stderr().matchAll(/reconnecting in/g)].length).toBeGreaterThanOrEqual(2);
    } finally {
      proxy.close();
    }
  });

  test("one line per event for people, --type and --folder (--no-recursive) filter, --after starts after a cursor", async () => {
    const key = await newKey();
    const a = await api("POST", "/api/v1/documents", key, { name: "one.json", folder: "a", content: 1 });
    await api("POST", "/api/v1/documents", key, { name: "two.json", folder: "b", content: 2 });
    await api("DELETE", `/api/v1/documents/${a.document.id}`, key);
    await api("POST", "/api/v1/documents", key, { name: "three.json", folder: "a/deep", content: 3 });
    const all = await feed(key);
    const people = tail(["events", "tail"], tailed.url, key);
    const filtered = tail(["events", "tail", "--type", "document.deleted", "--folder", "a"], tailed.url, key);
    const subtree = tail(["events", "tail", "--folder", "a"], tailed.url, key);
    const exact = tail(["events", "tail", "--folder", "a", "--no-recursive"], tailed.url, key);
    const after = tail(["events", "tail", "--after", all[0].cursor], tailed.url, key);
    await people.until(() => people.lines().length === 4);
    await filtered.until(() => filtered.lines().length === 1);
    await subtree.until(() => subtree.lines().length === 3);
    await exact.until(() => exact.lines().length === 2);
    await after.until(() => after.lines().length === 3);
    await Bun.sleep(300);
    for (const follower of [people, filtered, subtree, exact, after]) await follower.stop();
    expect(people.lines()).toEqual([
      expect.stringMatching(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ  document\\.created  ${a.document.id}  a/one\\.json$`)),
      expect.stringMatching(/ {2}document\.created {2}doc_\S+ {2}b\/two\.json$/),
      expect.stringMatching(new RegExp(`  document\\.deleted  ${a.document.id}  a/one\\.json$`)),
      expect.stringMatching(/ {2}document\.created {2}doc_\S+ {2}a\/deep\/three\.json$/),
    ]);
    expect(filtered.lines()).toEqual([expect.stringMatching(/ {2}document\.deleted {2}doc_\S+ {2}a\/one\.json$/)]);
    expect(subtree.lines().map((line) => line.split("  ")[3])).toEqual(["a/one.json", "a/one.json", "a/deep/three.json"]);
    expect(exact.lines().map((line) => line.split("  ")[3])).toEqual(["a/one.json", "a/one.json"]);
    expect(after.lines().map((line) => line.split("  ")[3])).toEqual(["b/two.json", "a/one.json", "a/deep/three.json"]);
    expect(people.stderr()).toBe("");
  });

  test("a refusal a retry cannot fix ends it at once: exit 1 with the problem (a bad cursor, an unknown key)", async () => {
    const key = await newKey();
    const bad = tail(["events", "tail", "--after", "nope"], tailed.url, key);
    expect(await bad.exited).toBe(1);
    expect(bad.stderr()).toContain("invalid_cursor");
    const unknown = tail(["events", "tail"], tailed.url, "kiln_not-a-real-key-000000000000000000");
    expect(await unknown.exited).toBe(1);
    expect(unknown.stderr()).toContain("401");
    expect(unknown.stderr()).not.toContain("reconnecting");
  });
});
