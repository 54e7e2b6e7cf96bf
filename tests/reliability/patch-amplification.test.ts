/**
 * Amplification fuzz for document patches (RELIABILITY.md, "Resource bounds"): fast-check searches
 * small documents and small JSON Patch / merge patch bodies biased towards large results (copies of the
 * root or of large members, moves back and forth, adds of long values, many operations) against the
 * real server. Property: every answer is 200 with a stored size within the account's maximum document
 * size, or a 4xx problem with a code; the server's RSS stays under RSS_BOUND_BYTES and /health answers
 * within 100 ms throughout. The two requests that once took Kiln down are among the regressions in
 * noisy-neighbour.test.ts and patch-bounds.test.ts. PATCH_FUZZ_RUNS sets the number of cases.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { type RunServer, startRunServer } from "./support/run-server";
import { rssOf, watchServer } from "./support/watch";

const RUNS = Number(process.env.PATCH_FUZZ_RUNS ?? 150);
const MAX_DOCUMENT_BYTES = 1024 * 1024;
/** the server's resident memory while the fuzz runs: its idle size here is about 150 MiB */
const RSS_BOUND_BYTES = 512 * 1024 * 1024;
/**
 * /health's slowest answer while the cases run: a run holding the main thread shows as seconds (the
 * class this catches); a loaded 2-core machine alone gave 113 and 277 ms with other suites running.
 */
const HEALTH_BOUND_MS = 250;

let run: RunServer;
let key: string;

beforeAll(async () => {
  run = await startRunServer({ LOG_LEVEL: "warn" });
  const admin = (path: string, body: unknown) =>
    fetch(run.server.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${run.bootstrapKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((response) => response.json() as Promise<any>);
  const { account } = await admin("/api/v1/admin/accounts", {
    name: "patch-fuzz",
    maxDocumentBytes: MAX_DOCUMENT_BYTES,
    storageLimitBytes: null,
    rateLimitPerMinute: null,
    maxVersions: 2,
  });
  key = (await admin("/api/v1/admin/keys", { accountId: account.id, permissions: ["documents"] })).key;
}, 60_000);
afterAll(async () => {
  await run?.close();
});

const pointer = fc.constantFrom("", "/a", "/b", "/a/0", "/a/-", "/b/c", "/n0", "/n1");
const longValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.nat({ max: 20_000 }).map((length) => "v".repeat(length)),
);
const operation = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("copy"), from: pointer, path: pointer }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("move"), from: pointer, path: pointer }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("add"), path: pointer, value: longValue }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("replace"), path: pointer, value: longValue }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("remove"), path: pointer }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("test"), path: pointer, value: longValue }) },
);
/** Many copies of the root, each into a new member: the doubling shape. */
const doubling = fc
  .integer({ min: 1, max: 40 })
  .map((count) => Array.from({ length: count }, (_, i) => ({ op: "copy", from: "", path: `/n${i}` })));
const jsonPatch = fc.oneof(fc.array(operation, { minLength: 1, maxLength: 40 }), doubling);
const mergePatch = fc.dictionary(fc.constantFrom("a", "b", "c", "n0", "n1"), fc.oneof(longValue, fc.constant(null)));
const document = fc.record({ a: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }), b: fc.record({ c: longValue }) });

async function request(
  method: string,
  path: string,
  body?: string,
  contentType = "application/json",
): Promise<{ status: number; body: any }> {
  const response = await fetch(run.server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": contentType }) },
    body,
  });
  return { status: response.status, body: await response.json() };
}

test(`${RUNS} patches in search of a large result: 200 within the limit or a 4xx, memory and /health bounded`, async () => {
  const watch = watchServer(run.server.url, run.server.proc.pid);
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(
      document,
      fc.oneof(
        jsonPatch.map((ops) => ({ merge: false, body: ops as unknown })),
        mergePatch.map((body) => ({ merge: true, body: body as unknown })),
      ),
      async (content, patch) => {
        const created = await request("POST", "/api/v1/documents", JSON.stringify({ name: "fuzz", content }));
        expect(created.status).toBe(201);
        const id = created.body.document.id;
        const answer = await request(
          "PATCH",
          `/api/v1/documents/${id}/content`,
          JSON.stringify(patch.body),
          patch.merge ? "application/merge-patch+json" : "application/json-patch+json",
        );
        const outcome = answer.status === 200 ? "200" : `${answer.status} ${answer.body.code}`;
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
        if (answer.status === 200) expect(answer.body.document.fileSize).toBeLessThanOrEqual(MAX_DOCUMENT_BYTES);
        else {
          expect(answer.status).toBeGreaterThanOrEqual(400);
          expect(answer.status).toBeLessThan(500);
          expect(typeof answer.body.code).toBe("string");
        }
        expect((await request("DELETE", `/api/v1/documents/${id}`)).status).toBe(200);
        expect(rssOf(run.server.proc.pid)).toBeLessThan(RSS_BOUND_BYTES);
      },
    ),
    { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
  );
  const report = await watch.stop();
  console.log(
    `patch amplification: ${RUNS} cases, outcomes ${JSON.stringify(Object.fromEntries(seen))}; /health max ${report.healthMaxMs.toFixed(1)} ms over ${report.healthChecks} checks; RSS peak ${(report.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  expect(seen.get("413 document_too_large") ?? 0).toBeGreaterThan(0);
  expect(report.healthFailures).toBe(0);
  expect(report.healthMaxMs).toBeLessThan(HEALTH_BOUND_MS);
  expect(report.peakRssBytes).toBeLessThan(RSS_BOUND_BYTES);
}, 300_000);
