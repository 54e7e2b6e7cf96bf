/** Drain on SIGTERM, on the real server: /ready answers 503 at once, in-flight requests finish, then exit 0. */
import { afterAll, expect, test } from "bun:test";
import { startRunServer, type RunServer } from "./reliability/support/run-server";

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
