import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { IDEMPOTENCY_STALE_CLAIM_MS, IDEMPOTENCY_TTL_MS, purgeExpiredIdempotencyKeys } from "../../src/http/idempotency";
import { documentsRepository } from "../../src/modules/documents/repository";
import { registry as testRegistry } from "../engine/fixtures/registry";
import { createTestApp, type TestApp } from "../support/app";

// test apps, worker threads and real servers take seconds on a loaded machine
setDefaultTimeout(60_000);

let t: TestApp;
let clock = Date.now();

beforeAll(async () => {
  t = await createTestApp({}, { now: () => clock });
});
afterAll(() => t.close());

const newKey = () => `key-${Bun.randomUUIDv7()}`;
// biome-ignore lint/correctness/noPrecisionLoss: a number past 2^53, sent as JSON text on purpose
const create = (key: string, idempotencyKey: string, body: unknown = { name: "invoice", content: { total: 12345678901234567890 } }) =>
  t.request("POST", "/api/v1/documents", { key, body, headers: { "Idempotency-Key": idempotencyKey } });

async function documentCount(key: string): Promise<number> {
  const list = await t.json("GET", "/api/v1/documents?limit=200", { key });
  return list.body.documents.length;
}

async function creditsUsed(key: string): Promise<number> {
  return (await t.json("GET", "/api/v1/usage", { key })).body.credits.used;
}

describe("POST /api/v1/documents with Idempotency-Key", () => {
  test("a retry replays the first answer (status, body, Location, ETag) and creates nothing", async () => {
    const { key } = await t.newAccount();
    const idem = newKey();
    const first = await create(key, idem);
    const firstBody = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const retry = await create(key, idem);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(firstBody);
    expect(retry.headers.get("location")).toBe(first.headers.get("location"));
    expect(retry.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(retry.headers.get("content-type")).toContain("application/json");
    expect(retry.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await documentCount(key)).toBe(1);
  });

  test("a replayed problem (a kept 4xx) carries the replay's own request id, in the body as in X-Request-Id", async () => {
    const { key } = await t.newAccount({ storageLimitBytes: 10 });
    const idem = newKey();
    const send = (headers: Record<string, string> = {}) =>
      t.request("POST", "/api/v1/documents", {
        key,
        body: { name: "invoice", content: { total: 12.5, lines: ["a", "b", "c"] } },
        headers: { "Idempotency-Key": idem, ...headers },
      });
    const first = await send();
    expect(first.status).toBe(413);
    const firstBody = (await first.json()) as { code: string; requestId: string };
    expect(firstBody.code).toBe("storage_limit_exceeded");
    expect(firstBody.requestId).toBe(first.headers.get("x-request-id")!);
    for (const headers of [{}, { "X-Request-Id": "retry-of-upload-7" }] as Record<string, string>[]) {
      const retry = await send(headers);
      expect(retry.status).toBe(413);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      const body = (await retry.json()) as { code: string; detail: string; requestId: string };
      const requestId = retry.headers.get("x-request-id")!;
      expect(requestId).toBe(headers["X-Request-Id"] ?? requestId);
      expect(requestId).not.toBe(firstBody.requestId);
      expect(body.requestId).toBe(requestId);
      expect({ ...body, requestId: firstBody.requestId }).toEqual(firstBody as typeof body); // the rest is the first answer
    }
  });

  test("the same key with another body is 422 idempotency_key_reused", async () => {
    const { key } = await t.newAccount();
    const idem = newKey();
    expect((await create(key, idem)).status).toBe(201);
    const other = await create(key, idem, { name: "invoice", content: { total: 1 } });
    expect(other.status).toBe(422);
    expect(((await other.json()) as any).code).toBe("idempotency_key_reused");
    expect(await documentCount(key)).toBe(1);
  });

  test("keys belong to one account: another account's same key runs on its own", async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const idem = newKey();
    const first: any = await (await create(a.key, idem)).json();
    const second = await create(b.key, idem);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(((await second.json()) as any).document.id).not.toBe(first.document.id);
  });

  test("20 concurrent duplicates make exactly one document; the others wait (409) or replay it", async () => {
    const { key } = await t.newAccount();
    const idem = newKey();
    const responses = await Promise.all(Array.from({ length: 20 }, () => create(key, idem)));
    const bodies = await Promise.all(responses.map((response) => response.json() as Promise<any>));
    const created = bodies.filter((_, i) => responses[i].status === 201);
    const waiting = bodies.filter((_, i) => responses[i].status === 409);
    expect(created.length + waiting.length).toBe(20);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((body) => body.document.id)).size).toBe(1);
    for (const body of waiting) expect(body.code).toBe("idempotency_in_progress");
    expect(responses.filter((response) => response.status === 201 && response.headers.get("idempotent-replayed") === null).length).toBe(1);
    expect(await documentCount(key)).toBe(1);
    const retry = await create(key, idem);
    expect(retry.status).toBe(201);
    expect(((await retry.json()) as any).document.id).toBe(created[0].document.id);
  });

  test("while the first request runs, a retry is 409 idempotency_in_progress with Retry-After", async () => {
    const { key, accountId } = await t.newAccount();
    const idem = newKey();
    expect((await create(key, idem)).status).toBe(201);
    // As if the first request were still running in another process.
    await t.testDb.database.db.execute(sql`update idempotency_keys set status = null where account_id = ${accountId}`);
    const retry = await create(key, idem);
    expect(retry.status).toBe(409);
    expect(retry.headers.get("retry-after")).toBe("1");
    expect(((await retry.json()) as any).code).toBe("idempotency_in_progress");
  });

  test("a claim left running by a dead process is taken over after the stale period", async () => {
    const { key, accountId } = await t.newAccount();
    const idem = newKey();
    expect((await create(key, idem)).status).toBe(201);
    await t.testDb.database.db.execute(
      sql`update idempotency_keys set status = null, created_at = ${clock - IDEMPOTENCY_STALE_CLAIM_MS - 1} where account_id = ${accountId}`,
    );
    const retry = await create(key, idem);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await documentCount(key)).toBe(2);
  });

  test("the sweep deletes a backlog of expired keys in batches, every one of them, and no live key", async () => {
    const { accountId } = await t.newAccount();
    const { db } = t.testDb.database;
    await db.execute(sql`insert into idempotency_keys (account_id, key, fingerprint, claim, created_at, expires_at)
      select ${accountId}, 'backlog-' || n, 'f', 'c', 0, 1 from generate_series(1, 12001) n`);
    await db.execute(sql`insert into idempotency_keys (account_id, key, fingerprint, claim, created_at, expires_at)
      values (${accountId}, 'live', 'f', 'c', 0, 100)`);
    expect(await purgeExpiredIdempotencyKeys(db, 50)).toBe(12001);
    const [{ count }] = await db.execute<{ count: number }>(
      sql`select count(*)::int as count from idempotency_keys where account_id = ${accountId}`,
    );
    expect(count).toBe(1);
  });

  test("after 24 hours a key is free again, and the sweep deletes expired keys", async () => {
    const { key } = await t.newAccount();
    const idem = newKey();
    expect((await create(key, idem)).status).toBe(201);
    const saved = clock;
    try {
      clock += IDEMPOTENCY_TTL_MS + 1;
      const later = await create(key, idem, { name: "other", content: [] });
      expect(later.status).toBe(201);
      expect(later.headers.get("idempotent-replayed")).toBeNull();
      clock += IDEMPOTENCY_TTL_MS + 1;
      expect(await purgeExpiredIdempotencyKeys(t.testDb.database.db, clock)).toBeGreaterThanOrEqual(1);
      const [{ count }] = await t.testDb.database.db.execute<{ count: number }>(
        sql`select count(*)::int as count from idempotency_keys where key = ${idem}`,
      );
      expect(count).toBe(0);
    } finally {
      clock = saved;
    }
  });

  test("a refusal decided by the route (413 over quota) is kept and replayed", async () => {
    const { key } = await t.newAccount({ storageLimitBytes: 10 });
    const idem = newKey();
    const first = await create(key, idem, { name: "big", content: "far more than ten bytes" });
    expect(first.status).toBe(413);
    const retry = await create(key, idem, { name: "big", content: "far more than ten bytes" });
    expect(retry.status).toBe(413);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("content-type")).toBe("application/problem+json");
    expect(((await retry.json()) as any).code).toBe("storage_limit_exceeded");
  });

  test("a body refused by validation does not claim the key", async () => {
    const { key } = await t.newAccount();
    const idem = newKey();
    const bad = await create(key, idem, { name: "x", content: 1, unknown: true });
    expect(bad.status).toBe(400);
    const good = await create(key, idem);
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
  });

  test.each([
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["not ASCII", "clé"],
  ])("a key that is %s is 400 invalid_idempotency_key", async (_, idem) => {
    const { key } = await t.newAccount();
    const response = await create(key, idem);
    expect(response.status).toBe(400);
    const problem: any = await response.json();
    expect(problem.code).toBe("invalid_idempotency_key");
    expect(problem.detail).toContain("Idempotency-Key");
    expect(await documentCount(key)).toBe(0);
  });

  test("255 printable characters are a valid key", async () => {
    const { key } = await t.newAccount();
    expect((await create(key, "~ !".repeat(85))).status).toBe(201);
  });

  test("authentication and permission come first: 401 and 403 whatever the key", async () => {
    const noKey = await t.request("POST", "/api/v1/documents", {
      key: "kiln_not_a_key_at_all_0000000000",
      body: { name: "x", content: 1 },
      headers: { "Idempotency-Key": "" },
    });
    expect(noKey.status).toBe(401);
    const { key } = await t.newAccount({ permissions: ["utilities"] });
    expect((await create(key, "k".repeat(300))).status).toBe(403);
  });
});

describe("POST /api/v1/utilities/{id} with Idempotency-Key", () => {
  const run = (key: string, idem: string, primary: unknown = { a: 1, b: { c: 2 } }) =>
    t.request("POST", "/api/v1/utilities/structure.flatten-nest", {
      key,
      body: { inputs: { primary } },
      headers: { "Idempotency-Key": idem },
    });

  test("20 concurrent duplicates spend one credit; a retry replays the output", async () => {
    const { key } = await t.newAccount({ plan: "starter" });
    const idem = newKey();
    const responses = await Promise.all(Array.from({ length: 20 }, () => run(key, idem)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    expect(await creditsUsed(key)).toBe(1);
    const firstOk = responses.find((response) => response.status === 200)!;
    const retry = await run(key, idem);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(await firstOk.text());
    expect(await creditsUsed(key)).toBe(1);
  });

  test("the same key on another utility is 422", async () => {
    const { key } = await t.newAccount();
    const idem = newKey();
    expect((await run(key, idem)).status).toBe(200);
    const other = await t.request("POST", "/api/v1/utilities/structure.remove-fields", {
      key,
      body: { inputs: { primary: { a: 1, b: { c: 2 } } } },
      headers: { "Idempotency-Key": idem },
    });
    expect(other.status).toBe(422);
  });
});

describe("POST /api/v1/pipelines/run and /{id}/run with Idempotency-Key", () => {
  const steps = [{ utility: "schema.clean-json" }, { utility: "structure.pick-fields", config: { paths: ["id"] } }];
  const body = { steps, inputs: { primary: [{ id: 1, x: null }] }, output: { saveAs: { name: "report" } } };

  test("20 concurrent duplicates run once: one run's credits, one saved document", async () => {
    const { key } = await t.newAccount({ plan: "starter" });
    const idem = newKey();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => t.request("POST", "/api/v1/pipelines/run", { key, body, headers: { "Idempotency-Key": idem } })),
    );
    expect(responses.every((response) => response.status === 200 || response.status === 409)).toBe(true);
    expect(await creditsUsed(key)).toBe(steps.length);
    expect(await documentCount(key)).toBe(1);
    const retry = await t.request("POST", "/api/v1/pipelines/run", { key, body, headers: { "Idempotency-Key": idem } });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await creditsUsed(key)).toBe(steps.length);
  });

  test("a saved pipeline's run replays too, and the same key with another body is 422", async () => {
    const { key } = await t.newAccount({ plan: "starter" });
    const saved = await t.json("POST", "/api/v1/pipelines", { key, body: { name: "p", steps } });
    expect(saved.status).toBe(201);
    const path = `/api/v1/pipelines/${saved.body.pipeline.id}/run`;
    const idem = newKey();
    const first = await t.request("POST", path, { key, body: { inputs: { primary: [{ id: 2 }] } }, headers: { "Idempotency-Key": idem } });
    expect(first.status).toBe(200);
    const again = await t.request("POST", path, { key, body: { inputs: { primary: [{ id: 2 }] } }, headers: { "Idempotency-Key": idem } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await first.text());
    expect(await creditsUsed(key)).toBe(steps.length);
    const other = await t.request("POST", path, { key, body: { inputs: { primary: [{ id: 3 }] } }, headers: { "Idempotency-Key": idem } });
    expect(other.status).toBe(422);
  });
});

describe("failed first attempts", () => {
  test("a timed-out run (408) releases the key: the retry runs again and is not a replay", async () => {
    // a run that never ends (the fixture test.spin, in a worker): its time limit, not a race with it, decides the answer
    const slow = await createTestApp({ UTILITY_TIMEOUT_MS: "200", UTILITY_INLINE_MAX_BYTES: "0" }, { utilityRegistry: testRegistry });
    try {
      const { key } = await slow.newAccount();
      const idem = newKey();
      const body = { inputs: { primary: 1 } };
      const first = await slow.request("POST", "/api/v1/utilities/test.spin", { key, body, headers: { "Idempotency-Key": idem } });
      expect(first.status).toBe(408);
      const retry = await slow.request("POST", "/api/v1/utilities/test.spin", { key, body, headers: { "Idempotency-Key": idem } });
      expect(retry.status).toBe(408);
      expect(retry.headers.get("idempotent-replayed")).toBeNull();
      const [{ count }] = await slow.testDb.database.db.execute<{ count: number }>(
        sql`select count(*)::int as count from idempotency_keys`,
      );
      expect(count).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

describe("a replay passes the checks the first request passed", () => {
  async function keyFor(accountId: string, permissions: string[]): Promise<string> {
    const created = await t.json("POST", "/api/v1/admin/keys", { body: { accountId, permissions } });
    expect(created.status).toBe(201);
    return created.body.key;
  }

  async function storedDocument(key: string, content: unknown): Promise<string> {
    const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "secret", content } });
    expect(created.status).toBe(201);
    return created.body.document.id;
  }

  const runOn = (key: string, idem: string, documentId: string) =>
    t.request("POST", "/api/v1/utilities/structure.pick-fields", {
      key,
      body: { inputs: { primaryDocumentId: documentId }, config: { paths: ["secret"] } },
      headers: { "Idempotency-Key": idem },
    });

  test("a utilities-only key cannot replay a run that read a stored document: 403, and nothing of the content", async () => {
    const { accountId, key } = await t.newAccount({ permissions: ["documents", "utilities"] });
    const utilitiesOnly = await keyFor(accountId, ["utilities"]);
    const id = await storedDocument(key, { secret: "s3cr3t" });
    const idem = newKey();
    const first = await runOn(key, idem, id);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("s3cr3t");
    const replay = await runOn(utilitiesOnly, idem, id);
    expect(replay.status).toBe(403);
    const body = await replay.text();
    expect(body).not.toContain("s3cr3t");
    expect(JSON.parse(body).code).toBe("forbidden");
    // the key holder that ran it still gets the replay
    const again = await runOn(key, idem, id);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
  });

  test("a 403 is never kept: the same key with the documents permission runs for real", async () => {
    const { accountId, key } = await t.newAccount({ permissions: ["documents", "utilities"] });
    const utilitiesOnly = await keyFor(accountId, ["utilities"]);
    const id = await storedDocument(key, { secret: "x" });
    const idem = newKey();
    expect((await runOn(utilitiesOnly, idem, id)).status).toBe(403);
    const real = await runOn(key, idem, id);
    expect(real.status).toBe(200);
    expect(real.headers.get("idempotent-replayed")).toBeNull();
  });

  test("a 401 is never kept either", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const idem = newKey();
    expect((await create("kiln_notAKeyAtAll0123456789abcdefghijklm", idem)).status).toBe(401);
    const real = await create(key, idem);
    expect([real.status, real.headers.get("idempotent-replayed")]).toEqual([201, null]);
  });

  test("after the document is deleted the replay is 404; purging it removes the kept answer", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "utilities"] });
    const id = await storedDocument(key, { secret: "gone" });
    const idem = newKey();
    expect((await runOn(key, idem, id)).status).toBe(200);
    expect((await t.request("DELETE", `/api/v1/documents/${id}`, { key })).status).toBe(200);
    const replay = await runOn(key, idem, id);
    expect(replay.status).toBe(404);
    expect(await replay.text()).not.toContain('gone"');
    const kept = async () =>
      (
        await t.testDb.database.db.execute<{ count: number }>(
          sql`select count(*)::int as count from idempotency_keys where replay_requires->'documentIds' ? ${id}`,
        )
      )[0].count;
    expect(await kept()).toBe(1);
    expect((await t.request("POST", `/api/v1/documents/${id}/purge`, { key })).status).toBe(200);
    expect(await kept()).toBe(0);
  });
});

describe("answers larger than IDEMPOTENCY_MAX_ANSWER_BYTES", () => {
  test("are not kept: the first caller gets the answer, a retry gets 409 idempotency_answer_not_kept and runs nothing again", async () => {
    const small = await createTestApp({ IDEMPOTENCY_MAX_ANSWER_BYTES: "1024" });
    try {
      const { key } = await small.newAccount({ plan: "starter" });
      const idem = newKey();
      const body = { inputs: { primary: { text: "y".repeat(4000) } } };
      const first = await small.request("POST", "/api/v1/utilities/schema.clean-json", { key, body, headers: { "Idempotency-Key": idem } });
      expect(first.status).toBe(200);
      expect((await first.text()).length).toBeGreaterThan(4000);
      const retry = await small.json("POST", "/api/v1/utilities/schema.clean-json", { key, body, headers: { "Idempotency-Key": idem } });
      expect([retry.status, retry.body.code]).toEqual([409, "idempotency_answer_not_kept"]);
      expect(retry.body.detail).toContain("IDEMPOTENCY_MAX_ANSWER_BYTES");
      expect((await small.json("GET", "/api/v1/usage", { key })).body.credits.used).toBe(1);
      const [{ length }] = await small.testDb.database.db.execute<{ length: number | null }>(
        sql`select length(body) as length from idempotency_keys`,
      );
      expect(length).toBeNull();
    } finally {
      await small.close();
    }
  });
});

describe("what an account holds in kept answers (IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT)", () => {
  const BOUND = 200_000;
  let bounded: TestApp;
  let boundedClock = Date.now();
  beforeAll(async () => {
    // 20 runs at once go to the workers: a queue per account long enough that none is refused for it
    bounded = await createTestApp(
      { IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT: String(BOUND), UTILITY_QUEUE_PER_ACCOUNT: "64" },
      { now: () => boundedClock },
    );
  });
  afterAll(() => bounded.close());

  const run = (key: string, idem: string, text: string) =>
    bounded.request("POST", "/api/v1/utilities/schema.clean-json", {
      key,
      body: { inputs: { primary: { text } } },
      headers: { "Idempotency-Key": idem },
    });
  const usage = async (key: string) => (await bounded.json("GET", "/api/v1/usage", { key })).body.idempotency;
  /** what the rows hold, read apart from the counter */
  async function held(accountId: string) {
    const [row] = await bounded.testDb.database.db.execute<{ kept: number; bodies: number; counter: number }>(sql`
      select coalesce(sum(kept_bytes), 0)::float8 as kept, coalesce(sum(octet_length(body)), 0)::float8 as bodies,
        (select idempotency_kept_bytes::float8 from accounts where id = ${accountId}) as counter
      from idempotency_keys where account_id = ${accountId}`);
    return row!;
  }

  test("100 concurrent runs with 30 KB answers: A holds at most the bound, the rest are sent but not kept; B is unaffected", async () => {
    const a = await bounded.newAccount({ plan: "unlimited" });
    const b = await bounded.newAccount({ plan: "unlimited" });
    const keys = Array.from({ length: 100 }, newKey);
    const answers: { status: number; length: number }[] = [];
    for (let batch = 0; batch < 100; batch += 20)
      answers.push(
        ...(await Promise.all(
          keys.slice(batch, batch + 20).map(async (idem, i) => {
            const answer = await run(a.key, idem, `${batch + i} ${"y".repeat(30_000)}`);
            return { status: answer.status, length: (await answer.text()).length };
          }),
        )),
      );
    expect(answers.every((answer) => answer.status === 200 && answer.length > 30_000)).toBe(true);

    const shown = await usage(a.key);
    expect(shown.limitBytes).toBe(BOUND);
    expect(shown.keptBytes).toBeLessThanOrEqual(BOUND);
    expect(shown.keptBytes).toBeGreaterThan(BOUND - 2 * 31_000);
    const rows = await held(a.accountId);
    expect(rows.counter).toBe(shown.keptBytes);
    expect(rows.kept).toBe(shown.keptBytes);
    expect(rows.bodies).toBeLessThanOrEqual(BOUND);

    // the kept ones replay; the others are 409 idempotency_answer_not_kept, and nothing runs again
    const statuses = await Promise.all(keys.map(async (idem, i) => (await run(a.key, idem, `${i} ${"y".repeat(30_000)}`)).status));
    const replayed = statuses.filter((status) => status === 200).length;
    expect(replayed).toBeGreaterThanOrEqual(5);
    expect(replayed).toBeLessThanOrEqual(Math.floor(BOUND / 30_000));
    expect(statuses.filter((status) => status === 409)).toHaveLength(100 - replayed);
    const notKept = await bounded.json("POST", "/api/v1/utilities/schema.clean-json", {
      key: a.key,
      body: { inputs: { primary: { text: `${statuses.indexOf(409)} ${"y".repeat(30_000)}` } } },
      headers: { "Idempotency-Key": keys[statuses.indexOf(409)]! },
    });
    expect([notKept.status, notKept.body.code]).toEqual([409, "idempotency_answer_not_kept"]);
    expect(notKept.body.detail).toContain("IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT");
    expect((await bounded.json("GET", "/api/v1/usage", { key: a.key })).body.credits.used).toBe(100);

    // B's answers are kept and replayed as if A were not there
    const idem = newKey();
    expect((await run(b.key, idem, "b".repeat(30_000))).status).toBe(200);
    const replay = await run(b.key, idem, "b".repeat(30_000));
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect((await usage(b.key)).keptBytes).toBeGreaterThan(30_000);
    expect((await held(b.accountId)).counter).toBe((await usage(b.key)).keptBytes);
  });

  test("expiry releases exactly: a key taken over after 24 hours and the sweep give the bytes back, and answers are kept again", async () => {
    const a = await bounded.newAccount({ plan: "unlimited" });
    const keys = Array.from({ length: 10 }, newKey);
    for (const [i, idem] of keys.entries()) expect((await run(a.key, idem, `${i} ${"z".repeat(30_000)}`)).status).toBe(200);
    const full = (await usage(a.key)).keptBytes;
    expect(full).toBeLessThanOrEqual(BOUND);
    expect(full).toBeGreaterThan(BOUND - 31_000);

    boundedClock += IDEMPOTENCY_TTL_MS + 1;
    // the first key again, after its expiry: it runs again (not a replay) and its new answer replaces the old one
    const again = await run(a.key, keys[0]!, `0 ${"z".repeat(30_000)}`);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, null]);
    expect((await held(a.accountId)).counter).toBe((await held(a.accountId)).kept);
    await purgeExpiredIdempotencyKeys(bounded.testDb.database.db, boundedClock);
    const after = await held(a.accountId);
    expect(after.counter).toBe(after.kept);
    expect(after.kept).toBeGreaterThan(30_000);
    expect(after.kept).toBeLessThan(31_000 * 2);
    expect((await usage(a.key)).keptBytes).toBe(after.kept);

    // room again: a new answer is kept and replays
    const idem = newKey();
    expect((await run(a.key, idem, "fresh")).status).toBe(200);
    expect((await run(a.key, idem, "fresh")).headers.get("idempotent-replayed")).toBe("true");
  });

  test("a purged document's kept answers give their bytes back, purged by a request or by the sweep", async () => {
    const { key, accountId } = await bounded.newAccount({ plan: "unlimited" });
    const keptRead = async () => {
      const created = await bounded.json("POST", "/api/v1/documents", {
        key,
        body: { name: "kept", content: { secret: "x".repeat(5000) } },
      });
      const id = created.body.document.id as string;
      const read = await bounded.request("POST", "/api/v1/utilities/structure.pick-fields", {
        key,
        body: { inputs: { primaryDocumentId: id }, config: { paths: ["secret"] } },
        headers: { "Idempotency-Key": newKey() },
      });
      expect(read.status).toBe(200);
      expect((await bounded.request("DELETE", `/api/v1/documents/${id}`, { key })).status).toBe(200);
      return id;
    };
    const byRequest = await keptRead();
    await keptRead(); // purged by the sweep below
    const before = await held(accountId);
    expect(before.counter).toBeGreaterThan(2 * 5000);
    expect(before.counter).toBe(before.kept);
    expect((await bounded.request("POST", `/api/v1/documents/${byRequest}/purge`, { key })).status).toBe(200);
    const half = await held(accountId);
    expect(half.counter).toBe(half.kept);
    expect(half.counter).toBeGreaterThan(5000);
    expect(half.counter).toBeLessThan(before.counter - 5000);
    boundedClock += 31 * 24 * 60 * 60 * 1000; // past PURGE_AFTER_MS (30 days)
    expect((await documentsRepository(bounded.testDb.database.db).purgeDue(boundedClock, 100)).purged).toBeGreaterThanOrEqual(1);
    expect(await held(accountId)).toEqual({ kept: 0, bodies: 0, counter: 0 });
  });
});
