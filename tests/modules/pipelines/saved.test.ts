/** Saved pipelines: CRUD per account, pagination, permissions, runs, and an edit during a run. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DiskContentStore } from "../../../src/storage/disk";
import { createTestApp, type TestApp } from "../../support/app";

/** A disk store whose reads can be held back, to edit a pipeline while a run of it is under way. */
class GatedStore extends DiskContentStore {
  gate: Promise<void> | undefined;
  reached: (() => void) | undefined;
  override async open(key: string) {
    if (this.gate) {
      this.reached?.();
      await this.gate;
    }
    return super.open(key);
  }
}

let store: GatedStore;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { contentStore: (dataDir) => (store = new GatedStore(join(dataDir, "content"))) });
});
afterAll(async () => {
  await t.close();
});

const STEPS = [{ utility: "structure.pick-fields", config: { paths: ["id"] } }, { utility: "schema.clean-json" }];
const create = (body: unknown, key?: string) => t.json("POST", "/api/v1/pipelines", { body, key });

describe("saved pipelines", () => {
  test("create (201, pip_ id, Location), get, edit, delete", async () => {
    const { key } = await t.newAccount({ permissions: ["utilities"] });
    const created = await create({ name: " ids ", description: "keep ids", steps: STEPS }, key);
    expect(created.status).toBe(201);
    const pipeline = created.body.pipeline;
    expect(pipeline).toEqual({
      id: expect.stringMatching(/^pip_[0-9a-f-]{36}$/),
      name: "ids",
      description: "keep ids",
      steps: STEPS,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(created.headers.get("location")).toBe(`/api/v1/pipelines/${pipeline.id}`);
    expect((await t.json("GET", `/api/v1/pipelines/${pipeline.id}`, { key })).body).toEqual({ success: true, pipeline });

    const renamed = await t.json("PUT", `/api/v1/pipelines/${pipeline.id}`, { key, body: { name: "renamed", description: null } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.pipeline).toMatchObject({ name: "renamed", description: null, steps: STEPS });
    const restepped = await t.json("PUT", `/api/v1/pipelines/${pipeline.id}`, { key, body: { steps: [{ utility: "schema.clean-json" }] } });
    expect(restepped.body.pipeline).toMatchObject({ name: "renamed", steps: [{ utility: "schema.clean-json" }] });
    expect((await t.json("PUT", `/api/v1/pipelines/${pipeline.id}`, { key, body: {} })).status).toBe(400);

    expect((await t.json("DELETE", `/api/v1/pipelines/${pipeline.id}`, { key })).body).toEqual({ success: true, deleted: true });
    for (const [method, path] of [
      ["GET", ""],
      ["DELETE", ""],
      ["POST", "/run"],
    ] as const) {
      const res = await t.json(method, `/api/v1/pipelines/${pipeline.id}${path}`, {
        key,
        body: method === "POST" ? { inputs: { primary: 1 } } : undefined,
      });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("pipeline_not_found");
    }
  });

  test("steps are validated on create and edit: 400 naming the step index", async () => {
    const unknown = await create({ name: "p", steps: [{ utility: "schema.clean-json" }, { utility: "nope.nothing" }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: "/steps/1/utility", message: expect.stringContaining("nope.nothing") }]);
    const badConfig = await create({ name: "p", steps: [{ utility: "schema.clean-json", config: { trimStrings: "yes" } }] });
    expect(badConfig.body.errors.map((error: { path: string }) => error.path)).toEqual(["/steps/0/config/trimStrings"]);
    for (const body of [{ name: "p", steps: [] }, { name: "", steps: STEPS }, { name: "p", steps: STEPS, owner: "x" }, { steps: STEPS }]) {
      expect((await create(body)).status).toBe(400);
    }
    const saved = await create({ name: "p", steps: STEPS });
    const edit = await t.json("PUT", `/api/v1/pipelines/${saved.body.pipeline.id}`, { body: { steps: [{ utility: "nope.nothing" }] } });
    expect(edit.body.errors).toEqual([{ path: "/steps/0/utility", message: expect.any(String) }]);
    expect((await t.json("GET", `/api/v1/pipelines/${saved.body.pipeline.id}`)).body.pipeline.steps).toEqual(STEPS);
  });

  test("a definition over 1 MiB is 413 pipeline_too_large", async () => {
    const res = await create({ name: "big", steps: [{ utility: "merge.deep-merge", secondary: "x".repeat(1024 * 1024) }] });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("pipeline_too_large");
  });

  test("list: newest first, paginated like documents, never another account's", async () => {
    const { key } = await t.newAccount({ permissions: ["utilities"] });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift((await create({ name: `p${i}`, steps: STEPS }, key)).body.pipeline.id);
    await create({ name: "someone else's", steps: STEPS });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { pipelines: { id: string }[]; nextCursor: string | null } } = await t.json(
        "GET",
        `/api/v1/pipelines?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        { key },
      );
      expect(page.body.pipelines.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.pipelines.map((pipeline) => pipeline.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect((await t.json("GET", "/api/v1/pipelines", { key })).body.pipelines).toHaveLength(5);
    for (const query of ["limit=0", "limit=201", "limit=x", "cursor=bad", "folder=a"]) {
      expect((await t.json("GET", `/api/v1/pipelines?${query}`, { key })).status).toBe(400);
    }
    const documentsCursor = (await t.json("GET", "/api/v1/documents?limit=1", { key: (await t.newAccount()).key })).body.nextCursor;
    if (documentsCursor) expect((await t.json("GET", `/api/v1/pipelines?cursor=${documentsCursor}`, { key })).status).toBe(400);
  });

  test("another account's pipeline is 404 on every route", async () => {
    const mine = (await create({ name: "mine", steps: STEPS })).body.pipeline.id;
    const { key } = await t.newAccount();
    for (const [method, path, body] of [
      ["GET", "", undefined],
      ["PUT", "", { name: "x" }],
      ["DELETE", "", undefined],
      ["POST", "/run", { inputs: { primary: 1 } }],
    ] as const) {
      const res = await t.json(method, `/api/v1/pipelines/${mine}${path}`, { key, body });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("pipeline_not_found");
    }
    expect((await t.json("GET", `/api/v1/pipelines/${mine}`)).status).toBe(200);
  });

  test("permissions: utilities for every route; documents too when a run reads or saves documents", async () => {
    const documentsOnly = (await t.newAccount({ permissions: ["documents"] })).key;
    for (const [method, path] of [
      ["GET", "/api/v1/pipelines"],
      ["POST", "/api/v1/pipelines"],
      ["POST", "/api/v1/pipelines/run"],
      ["GET", "/api/v1/pipelines/pip_x"],
    ] as const) {
      expect((await t.json(method, path, { key: documentsOnly, body: {} })).status).toBe(403);
    }
    expect((await t.json("GET", "/api/v1/pipelines", { key: null })).status).toBe(401);
    const utilitiesOnly = (await t.newAccount({ permissions: ["utilities"] })).key;
    const doc = (await t.json("POST", "/api/v1/documents", { body: { name: "d", content: [1] } })).body.document.id;
    for (const body of [
      { steps: STEPS, inputs: { primaryDocumentId: doc } },
      { steps: [{ utility: "merge.deep-merge", secondaryDocumentId: doc }], inputs: { primary: {} } },
      { steps: STEPS, inputs: { primary: [] }, output: { saveAs: { name: "out" } } },
      { steps: STEPS, inputs: { primary: [] }, output: { saveTo: doc } },
    ]) {
      const res = await t.json("POST", "/api/v1/pipelines/run", { key: utilitiesOnly, body });
      expect(res.status).toBe(403);
      expect(res.body.detail).toContain("documents");
    }
    expect(
      (
        await t.json("POST", "/api/v1/pipelines/run", {
          key: utilitiesOnly,
          body: { steps: STEPS, inputs: { primary: [{ id: 1, x: 2 }] }, output: { return: false } },
        })
      ).status,
    ).toBe(200);
  });

  test("a saved pipeline runs with { inputs, output? }; its steps are not accepted in the body", async () => {
    const { key } = await t.newAccount();
    const id = (await create({ name: "ids", steps: STEPS }, key)).body.pipeline.id;
    const res = await t.json("POST", `/api/v1/pipelines/${id}/run`, {
      key,
      body: { inputs: { primary: [{ id: 1, name: null }, { id: 2 }] } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      output: [{ id: 1 }, { id: 2 }],
      creditsUsed: 2,
      steps: [{ utility: "structure.pick-fields" }, { utility: "schema.clean-json" }],
    });
    const withSteps = await t.json("POST", `/api/v1/pipelines/${id}/run`, { key, body: { steps: STEPS, inputs: { primary: 1 } } });
    expect(withSteps.body.errors).toEqual([{ path: "/steps", message: "unknown field" }]);
  });

  test("an edit while a run is under way: the run keeps the steps it started with, later runs get the new ones", async () => {
    const { key } = await t.newAccount();
    const doc = (await t.json("POST", "/api/v1/documents", { key, body: { name: "in", content: [{ id: 1, name: "Ada" }] } })).body.document
      .id;
    const id = (await create({ name: "p", steps: [{ utility: "structure.pick-fields", config: { paths: ["id"] } }] }, key)).body.pipeline
      .id;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => {
      store.reached = resolve;
    });
    store.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running = t.json("POST", `/api/v1/pipelines/${id}/run`, { key, body: { inputs: { primaryDocumentId: doc } } });
    await reached; // the run has read its pipeline and is reading its input
    const edited = await t.json("PUT", `/api/v1/pipelines/${id}`, {
      key,
      body: { steps: [{ utility: "structure.pick-fields", config: { paths: ["name"] } }, { utility: "schema.clean-json" }] },
    });
    expect(edited.status).toBe(200);
    store.gate = undefined;
    release();
    const first = await running;
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ output: [{ id: 1 }], creditsUsed: 1 });
    const second = await t.json("POST", `/api/v1/pipelines/${id}/run`, { key, body: { inputs: { primaryDocumentId: doc } } });
    expect(second.body).toMatchObject({ output: [{ name: "Ada" }], creditsUsed: 2 });
  });
});
