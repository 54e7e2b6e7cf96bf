import { afterAll, beforeAll, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import { registry as testRegistry } from "../../engine/fixtures/registry";
import { ADMIN_KEY, createTestApp, type TestApp } from "../../support/app";

// Worker start-up (importing every utility) takes seconds on a loaded 2-core machine.
setDefaultTimeout(30_000);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { utilityRegistry: testRegistry });
});
afterAll(async () => {
  await t.close();
});

const run = (utilityId: string, options: Parameters<TestApp["json"]>[2]) => t.json("POST", `/api/v1/utilities/${utilityId}`, options);
const paths = (body: { errors?: { path: string }[] }) => body.errors?.map((error) => error.path);

describe("POST /api/v1/utilities/{utilityId}", () => {
  test("success: output, the utility's own duration and one credit", async () => {
    const res = await run("merge.deep-merge", { body: { inputs: { primary: { a: 1 }, secondary: { b: 2 } } } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("ratelimit-limit")).toBeTruthy();
    expect(res.body).toEqual({ success: true, output: { a: 1, b: 2 }, durationMs: expect.any(Number), creditsUsed: 1 });
    expect(res.body.durationMs).toBeGreaterThanOrEqual(0);
  });

  test("config omitted runs with the defaults; primary may be null", async () => {
    expect((await run("schema.clean-json", { body: { inputs: { primary: { a: null, b: [] } } } })).body.output).toEqual({});
    const nullPrimary = await run("test.echo", { body: { inputs: { primary: null } } });
    expect(nullPrimary.status).toBe(200);
    expect(nullPrimary.body.output).toEqual({ primary: null });
  });

  test("401 without or with a bad key, before 404 and 400", async () => {
    for (const key of [null, "kiln_not-a-real-key-000000000000000000"]) {
      const res = await run("no.such", { key, rawBody: "{bad" });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  test("403 for a key without the utilities permission", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const res = await run("merge.deep-merge", { key, body: { inputs: { primary: 1 } } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("forbidden");
  });

  test("404 utility_not_found for an unknown id, even with a bad body", async () => {
    const res = await run("convert.nothing", { rawBody: "{bad" });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, code: "utility_not_found", status: 404 });
    expect(res.body.detail).toContain("convert.nothing");
  });

  test("the alias compare.json-diff reaches analysis.diff", async () => {
    const res = await run("compare.json-diff", { body: { inputs: { primary: { a: 1 }, secondary: { a: 2 } } } });
    expect(res.status).not.toBe(404);
  });

  describe("400 for each kind of bad body, naming the field", () => {
    const cases: [string, string | Uint8Array, string, string[] | undefined][] = [
      ["malformed JSON", '{"inputs": {', "malformed_json", undefined],
      ["an empty body", "", "body_required", undefined],
      ["a body that is not an object", "[1]", "validation_failed", [""]],
      ["missing inputs", '{"config":{}}', "validation_failed", ["/inputs"]],
      ["inputs not an object", '{"inputs":[1]}', "validation_failed", ["/inputs"]],
      ["missing inputs.primary", '{"inputs":{"secondary":1}}', "validation_failed", ["/inputs/primary"]],
      ["an unknown top-level field", '{"inputs":{"primary":1},"confg":{}}', "validation_failed", ["/confg"]],
      ["an unknown field in inputs", '{"inputs":{"primary":1,"tertiary":2}}', "validation_failed", ["/inputs/tertiary"]],
      ["config not an object", '{"inputs":{"primary":1},"config":"x"}', "validation_failed", ["/config"]],
      ["an unknown config field", '{"inputs":{"primary":1},"config":{"removeNull":true}}', "validation_failed", ["/config/removeNull"]],
      [
        "a config field of the wrong type",
        '{"inputs":{"primary":1},"config":{"trimStrings":1}}',
        "validation_failed",
        ["/config/trimStrings"],
      ],
      [
        "a __proto__ config field",
        '{"inputs":{"primary":1},"config":{"__proto__":{"trimStrings":true}}}',
        "validation_failed",
        ["/config/__proto__"],
      ],
      ["JSON that is not UTF-8", new Uint8Array([0x7b, 0xff, 0x7d]), "malformed_json", undefined],
    ];
    for (const [name, rawBody, code, fields] of cases) {
      test(name, async () => {
        const res = await run("schema.clean-json", { rawBody, headers: { "content-type": "application/json" } });
        expect(res.status).toBe(400);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect(res.body.code).toBe(code);
        if (fields) expect(paths(res.body)).toEqual(fields);
      });
    }
  });

  test("several problems are all named at once", async () => {
    const res = await run("merge.deep-merge", {
      body: { inputs: { primary: 1 }, config: { conflictStrategy: "mine", arrayStrategy: 3, depth: 2 } },
    });
    expect(res.status).toBe(400);
    expect(paths(res.body)?.sort()).toEqual(["/config/arrayStrategy", "/config/conflictStrategy", "/config/depth"]);
  });

  test("400 utility_failed when the utility throws, whatever it throws; never a 500", async () => {
    const typeError = await run("test.type-error", { body: { inputs: { primary: {} } } });
    expect(typeError.status).toBe(400);
    expect(typeError.body.code).toBe("utility_failed");
    expect(typeError.body.detail).toContain("test.type-error could not process the input");
    const unserialisable = await run("test.bigint", { body: { inputs: { primary: 1 } } });
    expect(unserialisable.status).toBe(400);
    expect(unserialisable.body.code).toBe("utility_failed");
  });

  test("a config refused by the utility itself is 400 validation_failed under /config", async () => {
    const res = await run("test.config-error", { body: { inputs: { primary: 1 } } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: "/config/expression", message: "does not parse" }]);
  });

  test("prototype keys in inputs are plain data, inline and in a worker", async () => {
    const inputs = '{"primary":{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}},"secondary":{"__proto__":{"more":1}}}';
    for (const padding of ["", " ".repeat(t.config.utilityInlineMaxBytes)]) {
      const res = await t.request("POST", "/api/v1/utilities/merge.deep-merge", { rawBody: `{"inputs":${inputs}${padding}}` });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('"output":{"__proto__":{"polluted":true,"more":1},"constructor":{"prototype":{"x":1}}}');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("the same input gives the same output inline and in a worker", async () => {
    const spy = spyOn(t.workerPool, "run");
    const body = JSON.stringify({
      inputs: { primary: { user: { name: " Ada ", tags: ["", "x", null], meta: {} }, list: [1, [], { a: null }] } },
      config: { trimStrings: true, removeEmptyObjects: true },
    });
    const inline = await t.request("POST", "/api/v1/utilities/schema.clean-json", { rawBody: body });
    expect(spy).not.toHaveBeenCalled();
    const padded = body.replace("{", "{" + "\n".repeat(t.config.utilityInlineMaxBytes));
    const inWorker = await t.request("POST", "/api/v1/utilities/schema.clean-json", { rawBody: padded });
    expect(spy).toHaveBeenCalledTimes(1);
    spy.mockRestore();
    const [inlineText, workerText] = [await inline.text(), await inWorker.text()];
    const outputOf = (text: string) => text.slice(0, text.indexOf(',"durationMs"'));
    expect(outputOf(workerText)).toBe(outputOf(inlineText));
    expect(outputOf(workerText)).toBe('{"success":true,"output":{"user":{"name":"Ada","tags":["x"]},"list":[1]}');
  });

  test("429 when the account's rate limit is used up", async () => {
    const { key } = await t.newAccount({ rateLimitPerMinute: 1 });
    expect((await run("test.echo", { key, body: { inputs: { primary: 1 } } })).status).toBe(200);
    const limited = await run("test.echo", { key, body: { inputs: { primary: 1 } } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("credits", () => {
  const usedBy = async (key: string) => (await t.json("GET", "/api/v1/usage", { key })).body.credits;

  test("only successful runs count, in the usage report", async () => {
    const { key } = await t.newAccount({ monthlyCredits: null });
    await run("test.echo", { key, body: { inputs: { primary: 1 } } });
    await run("test.type-error", { key, body: { inputs: { primary: 1 } } });
    await run("test.echo", { key, body: { inputs: {} } });
    await run("test.echo", { key, rawBody: "{" });
    await run("test.echo", { key, body: { inputs: { primary: 2 } } });
    expect(await usedBy(key)).toMatchObject({ used: 2, limit: null });
  });

  test("402 credits_exhausted before running once monthlyCredits are used; failures cost nothing", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 2 });
    expect((await run("test.type-error", { key, body: { inputs: { primary: 1 } } })).status).toBe(400);
    expect((await run("test.echo", { key, body: { inputs: { primary: 1 } } })).status).toBe(200);
    expect((await run("test.echo", { key, body: { inputs: { primary: 2 } } })).status).toBe(200);
    const exhausted = await run("test.echo", { key, body: { inputs: { primary: 3 } } });
    expect(exhausted.status).toBe(402);
    expect(exhausted.headers.get("content-type")).toBe("application/problem+json");
    expect(exhausted.body.code).toBe("credits_exhausted");
    expect(await usedBy(key)).toMatchObject({ used: 2, limit: 2 });
  });

  test("an account with no credits at all never runs anything", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 0 });
    expect((await run("test.echo", { key, body: { inputs: { primary: 1 } } })).status).toBe(402);
    expect(await usedBy(key)).toMatchObject({ used: 0, limit: 0 });
  });

  test("concurrent runs never spend more than the limit", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 3 });
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => run("test.echo", { key, body: { inputs: { primary: i } } }).then((res) => res.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 402)).toHaveLength(9);
    expect(await usedBy(key)).toMatchObject({ used: 3 });
  });
});

describe("a 10 MB run in a worker", () => {
  const encoder = new TextEncoder();
  // records with multi-byte text, so the output's UTF-8 bytes differ from its UTF-16 length
  const records = Array.from({ length: 40_000 }, (_, id) => ({
    id,
    name: `Ådå ${id} 東京 🚀`,
    note: "alpha ".repeat(30),
    address: { city: "Gent", zip: String(9000 + (id % 50)) },
  }));
  const config = { search: "alpha", replacement: "ωmega" };
  const body = JSON.stringify({ inputs: { primary: records }, config });

  test("answers exactly the bytes of JSON.stringify of the output, with a Content-Length that counts them", async () => {
    expect(body.length).toBeGreaterThan(10 * 1024 * 1024);
    const utility = testRegistry.find("structure.find-replace")!;
    const expected = encoder.encode(
      `{"success":true,"output":${JSON.stringify(await utility.run({ primary: records }, { ...config }))},"durationMs":`,
    );
    const spy = spyOn(t.workerPool, "run");
    // a real listener, so that the Content-Length is the one Bun sends
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      maxRequestBodySize: 64 * 1024 * 1024,
      fetch: (request) => t.app.handle(request),
    });
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/utilities/structure.find-replace`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json", "accept-encoding": "identity" },
        body,
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(res.status).toBe(200);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(Number(res.headers.get("content-length"))).toBe(bytes.byteLength);
      expect(Buffer.from(bytes.subarray(0, expected.byteLength)).equals(Buffer.from(expected))).toBe(true);
      expect(new TextDecoder().decode(bytes.subarray(expected.byteLength))).toMatch(/^[0-9.]+,"creditsUsed":1}$/);
    } finally {
      spy.mockRestore();
      server.stop(true);
    }
  });

  test("a malformed or too deeply nested large body is still 400 malformed_json, as a small one is", async () => {
    for (const [small, large] of [
      ['{"inputs":{"primary":[1]},"config":{"search":"a",}}', `${body.slice(0, -2)},}}`],
      [
        `{"inputs":{"primary":${"[".repeat(10_001)}${"]".repeat(10_001)}}}`,
        `${body.slice(0, -2)},"deep":${"[".repeat(10_001)}${"]".repeat(10_001)}}}`,
      ],
    ]) {
      const answers = [];
      for (const rawBody of [small, large]) {
        const res = await t.json("POST", "/api/v1/utilities/structure.find-replace", { rawBody });
        expect(res.status).toBe(400);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        answers.push(res.body);
      }
      const [inline, inWorker] = answers;
      expect(inWorker).toMatchObject({ success: false, status: 400, code: "malformed_json" });
      expect(Object.keys(inWorker).sort()).toEqual(Object.keys(inline).sort());
      expect(inWorker.detail.replace(/[0-9]+/g, "N")).toBe(inline.detail.replace(/[0-9]+/g, "N"));
    }
  });
});
