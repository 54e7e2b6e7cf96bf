/** Drain on SIGTERM, on the real server: /ready answers 503 at once, in-flight requests finish, then exit 0. */
import { afterAll, expect, test } from "bun:test";
import { type RunServer, startRunServer } from "./reliability/support/run-server";

let run: RunServer | undefined;
afterAll(async () => {
  await run?.close();
});

test("SIGTERM: /ready 503 at once, a slow in-flight upload completes with 200, then the process exits 0", async () => {
  run = await startRunServer({ LOG_LEVEL: "info" });
  const { server } = run;
  const key = await run.newKey(["documents"]);
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const created = (await (
    await fetch(`${server.url}/api/v1/documents`, { method: "POST", headers, body: JSON.stringify({ name: "slow", content: [0] }) })
  ).json()) as any;
  expect((await fetch(`${server.url}/ready`)).status).toBe(200);

  // an upload whose body arrives in pieces: in flight until the last piece is sent
  const pieces = ["[", "1,", "2,", "3", "]"];
  let sendRest!: () => void;
  const restMaySend = new Promise<void>((resolve) => {
    sendRest = resolve;
  });
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode(pieces[0]));
      await restMaySend;
      for (const piece of pieces.slice(1)) {
        controller.enqueue(new TextEncoder().encode(piece));
        await Bun.sleep(100);
      }
      controller.close();
    },
  });
  const upload = fetch(`${server.url}/api/v1/documents/${created.document.id}/content`, {
    method: "PUT",
    headers,
    body,
    duplex: "half",
  } as RequestInit);
  await Bun.sleep(300); // the server has the request and waits for the rest of its body

  server.proc.kill("SIGTERM");
  let ready: Response | undefined;
  for (let attempt = 0; attempt < 50 && ready?.status !== 503; attempt++) {
    ready = await fetch(`${server.url}/ready`);
    if (ready.status !== 503) await Bun.sleep(10);
  }
  expect(ready!.status).toBe(503);
  expect(((await ready!.json()) as any).code).toBe("draining");
  expect(server.proc.exitCode).toBeNull(); // still serving the upload

  sendRest();
  const answer = await upload;
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ success: true, fileSize: 7 });
  expect(await server.proc.exited).toBe(0);
  expect(server.output()).toContain('"msg":"draining"');
  expect(server.output()).toContain('"msg":"stopped"');
}, 120_000);

test("SIGTERM with a request that never finishes: the process exits within DRAIN_TIMEOUT_MS and the database's close", async () => {
  await run?.close();
  run = await startRunServer({ LOG_LEVEL: "info", DRAIN_TIMEOUT_MS: "1000" });
  const { server } = run;
  const key = await run.newKey(["documents"]);
  // a body whose end never comes
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"name":"never","content":['));
    },
  });
  const stuck = fetch(`${server.url}/api/v1/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
    duplex: "half",
  } as RequestInit).catch((error: unknown) => error);
  await Bun.sleep(300);
  const signalled = performance.now();
  server.proc.kill("SIGTERM");
  const code = await server.proc.exited;
  const tookMs = performance.now() - signalled;
  await stuck;
  expect(code).toBe(0);
  // DRAIN_TIMEOUT_MS, then 5 s at most to close the database (src/index.ts, CLOSE_DATABASE_MS)
  expect(tookMs).toBeLessThan(1_000 + 5_000 + 2_000);
  expect(server.output()).toContain('"msg":"drain timed out: closing the requests still in flight"');
}, 120_000);
