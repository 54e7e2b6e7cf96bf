/**
 * The typed client: Eden Treaty over the exported App type, against a listening server, used for a full
 * document and utility scenario with nothing but the client (its calls and types are checked by tsc).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { treaty } from "@elysiajs/eden";
import type { App, UtilityConfig, UtilityRunBody } from "../../src/app";
import { ADMIN_KEY, createTestApp, type TestApp } from "../support/app";

setDefaultTimeout(60_000);

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let url: string;

beforeAll(async () => {
  t = await createTestApp();
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => t.app.handle(request) });
  url = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  server.stop(true);
  await t.close();
});

describe("Eden Treaty client", () => {
  test("admin creates an account and a key; the key stores, reads, edits, transforms and deletes a document", async () => {
    const admin = treaty<App>(url, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const account = await admin.api.v1.admin.accounts.post({ name: "eden", plan: "pro" });
    expect(account.status).toBe(201);
    if (!account.data) throw new Error("no account");
    const created = await admin.api.v1.admin.keys.post({ accountId: account.data.account.id, permissions: ["documents", "utilities"] });
    if (!created.data) throw new Error("no key");
    const secret: string = created.data.key;

    const kiln = treaty<App>(url, { headers: { authorization: `Bearer ${secret}` } });
    const made = await kiln.api.v1.documents.post({
      name: "orders",
      content: [
        { id: 1, total: 10 },
        { id: 2, total: null },
      ],
      folder: "shop",
      tags: ["q1"],
    });
    expect(made.status).toBe(201);
    if (!made.data) throw new Error("no document");
    const id: string = made.data.document.id;
    expect(made.headers).toBeDefined();

    const document = kiln.api.v1.documents({ id });
    const metadata = await document.get();
    expect(metadata.data?.document).toMatchObject({ name: "orders", folder: "shop", tags: ["q1"] });

    const renamed = await document.put({ name: "orders-2024", description: "first quarter" });
    expect(renamed.data?.document.name).toBe("orders-2024");

    const listed = await kiln.api.v1.documents.get({ query: { folder: "shop", limit: 10 } });
    expect(listed.data?.documents.map((entry) => entry.id)).toEqual([id]);
    // limit is an integer to the client, as the OpenAPI document says (the server checks the text it receives)
    // @ts-expect-error a string is not a limit
    expect((await kiln.api.v1.documents.get({ query: { limit: "1.5" } })).status).toBe(400);
    expect((await kiln.api.v1.pipelines.get({ query: { limit: 1 } })).status).toBe(200);
    expect((await document.versions.get({ query: { limit: 1 } })).data?.versions).toHaveLength(1);
    const folders = await kiln.api.v1.folders.get();
    expect(folders.data?.folders.map((folder) => folder.path)).toContain("shop");

    const content = await document.content.get();
    expect(content.data).toEqual([
      { id: 1, total: 10 },
      { id: 2, total: null },
    ]);

    const cleaned = await kiln.api.v1.utilities({ utilityId: "schema.clean-json" }).post({ inputs: { primary: content.data } });
    expect(cleaned.status).toBe(200);
    expect(cleaned.data).toMatchObject({ success: true, output: [{ id: 1, total: 10 }, { id: 2 }], creditsUsed: 1 });

    // a run's config typed by its utility's schema (UtilityRunBody, exported beside App)
    const pick: UtilityRunBody<"structure.pick-fields"> = { inputs: { primary: { id: 1, secret: "s" } }, config: { paths: ["id"] } };
    const picked = await kiln.api.v1.utilities({ utilityId: "structure.pick-fields" }).post(pick);
    expect(picked.data?.output).toEqual({ id: 1 });
    // @ts-expect-error paths is a list of strings
    const wrong: UtilityConfig<"structure.pick-fields"> = { paths: "id" };
    expect(
      (await kiln.api.v1.utilities({ utilityId: "structure.pick-fields" }).post({ inputs: { primary: {} }, config: wrong })).status,
    ).toBe(400);

    const replaced = await document.content.put(cleaned.data?.output);
    expect(replaced.data?.success).toBe(true);
    expect((await document.content.get()).data).toEqual([{ id: 1, total: 10 }, { id: 2 }]);

    const usage = await kiln.api.v1.usage.get();
    expect(usage.data?.credits.used).toBe(2);

    const deleted = await document.delete();
    expect(deleted.data?.deleted).toBe(true);
    expect((await document.restore.post()).data?.document.id).toBe(id);
    expect((await document.delete()).status).toBe(200);
    expect((await document.purge.post()).data?.permanent).toBe(true);

    const gone = await document.get();
    expect(gone.status).toBe(404);
    expect(gone.error?.value).toMatchObject({ code: "document_not_found" });
  });
});
