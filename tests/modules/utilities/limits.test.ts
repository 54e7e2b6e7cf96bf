import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { registry as testRegistry } from "../../engine/fixtures/registry";
import { ADMIN_KEY, createTestApp, type TestApp } from "../../support/app";

// Worker start-up (importing every utility) takes seconds on a loaded 2-core machine.
setDefaultTimeout(30_000);

describe("payload limit and nesting depth (default configuration)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const alive = async () => {
    const res = await t.json("POST", "/api/v1/utilities/schema.clean-json", { body: { inputs: { primary: { a: null, b: 1 } } } });
    expect(res.status).toBe(200);
    expect(res.body.output).toEqual({ b: 1 });
  };

  test("a 51 MB body is refused with 413 problem+json", async () => {
    const body = new Uint8Array(51 * 1024 * 1024).fill(0x20);
    const res = await t.json("POST", "/api/v1/utilities/schema.clean-json", {
      rawBody: body,
      headers: { "content-length": String(body.byteLength) },
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body).toMatchObject({ success: false, code: "payload_too_large", status: 413 });
    await alive();
  });

  test("a streamed body without Content-Length is counted and refused past the limit", async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 60) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await t.app.handle(
      new Request("http://localhost/api/v1/utilities/schema.clean-json", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: stream,
      }),
    );
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("payload_too_large");
    expect(sent).toBeLessThan(60);
  });

  test("an unknown utility is 404 even with an oversized body", async () => {
    const res = await t.json("POST", "/api/v1/utilities/nope.nothing", {
      rawBody: "x",
      headers: { "content-length": String(60 * 1024 * 1024) },
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("utility_not_found");
  });

  test("401 still comes before 413", async () => {
    const res = await t.json("POST", "/api/v1/utilities/schema.clean-json", {
      key: null,
      rawBody: "x",
      headers: { "content-length": String(60 * 1024 * 1024) },
    });
    expect(res.status).toBe(401);
  });

  test("a 100,000-deep array is refused with 400 and the server keeps serving", async () => {
    const depth = 100_000;
    const rawBody = `{"inputs":{"primary":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
    const res = await t.json("POST", "/api/v1/utilities/schema.clean-json", { rawBody });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("malformed_json");
    expect(res.body.detail).toContain("10000 levels");
    await alive();
  });

  test("nesting just under the limit is processed in a worker", async () => {
    const depth = 9_990;
    const nested = `${'{"a":'.repeat(depth)}null${"}".repeat(depth)}`;
    const res = await t.request("POST", "/api/v1/utilities/merge.deep-merge", {
      rawBody: `{"inputs":{"primary":${nested},"secondary":{"b":2}}}`,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toStartWith(`{"success":true,"output":${nested.slice(0, -1)},"b":2},`);
    await alive();
  });
});

describe("time limit, busy pool and disconnects (one worker, 64-byte inline limit)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(
      { UTILITY_TIMEOUT_MS: "1500", UTILITY_INLINE_MAX_BYTES: "64", UTILITY_WORKERS: "1", UTILITY_QUEUE_LIMIT: "0" },
      { utilityRegistry: testRegistry },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  /** a body over the inline limit, so that the run goes to the worker */
  const inWorker = (primary: unknown) => JSON.stringify({ inputs: { primary } }).padEnd(200, " ");
  const small = (primary: unknown) => t.json("POST", "/api/v1/utilities/test.echo", { body: { inputs: { primary } } });
  const credits = async () => (await t.json("GET", "/api/v1/usage")).body.credits.used as number;

  test("a run past UTILITY_TIMEOUT_MS gets 408 while small requests keep being answered; its credit is used", async () => {
    const before = await credits();
    const spinning = t.json("POST", "/api/v1/utilities/test.spin", { rawBody: inWorker(1) });
    while (t.workerPool.busy === 0) await Bun.sleep(5);
    const busy = await t.json("POST", "/api/v1/utilities/test.echo", { rawBody: inWorker(2) });
    expect(busy.status).toBe(503);
    expect(busy.body.code).toBe("busy");
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(busy.body.detail).toBe("Every utility worker is busy and the queue is full (UTILITY_QUEUE_LIMIT); retry after 1 s");

    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await small(i));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);

    const timedOut = await spinning;
    expect(timedOut.status).toBe(408);
    expect(timedOut.headers.get("content-type")).toBe("application/problem+json");
    expect(timedOut.body.code).toBe("utility_timeout");
    expect(timedOut.body.detail).toEndWith("the run's credit is used");
    // five runs that succeeded, and the one stopped by its time limit: the work it did is paid for
    expect(await credits()).toBe(before + 6);

    const afterwards = await t.json("POST", "/api/v1/utilities/test.echo", { rawBody: inWorker("again") });
    expect(afterwards.status).toBe(200);
    expect(afterwards.body.output).toEqual({ primary: "again" });
  });

  test("a client that disconnects cancels its run: the worker is replaced and no credit is used", async () => {
    const before = await credits();
    const replacements = t.workerPool.replacements;
    const controller = new AbortController();
    const pending = t.app.handle(
      new Request("http://localhost/api/v1/utilities/test.spin", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: inWorker(1),
        signal: controller.signal,
      }),
    );
    while (t.workerPool.busy === 0) await Bun.sleep(5);
    controller.abort();
    await pending.catch(() => undefined);
    while (t.workerPool.busy > 0) await Bun.sleep(5);
    expect(t.workerPool.replacements).toBe(replacements + 1);
    expect(await credits()).toBe(before);
    expect((await t.json("POST", "/api/v1/utilities/test.echo", { rawBody: inWorker(3) })).status).toBe(200);
  });
});
