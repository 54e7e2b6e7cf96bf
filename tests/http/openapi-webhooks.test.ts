/**
 * The OpenAPI 3.1 `webhooks` of GET /openapi.json: one entry per event type the feed can emit, each a
 * POST with the Standard Webhooks headers and the Event as its body; a real delivery's body validates
 * against its entry's schema (ajv, strict) and its signature verifies with `standardwebhooks`.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import { Webhook } from "standardwebhooks";
import { EVENT_TYPES } from "../../src/modules/events/catalogue";
import type { Deliverer } from "../../src/modules/webhooks/deliver";
import { type Receiver, startDeliverer, startReceiver } from "../modules/webhooks/support";
import { createTestApp, type TestApp } from "../support/app";

setDefaultTimeout(60_000);

let t: TestApp;
let document: any;
let deliverer: Deliverer;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100" });
  const response = await t.request("GET", "/openapi.json", { key: null });
  expect(response.status).toBe(200);
  document = await response.json();
  deliverer = startDeliverer(t);
  receiver = startReceiver();
});
afterAll(async () => {
  receiver?.stop();
  await deliverer?.stop();
  await t.close();
});

/** An ajv validator of one schema of the document, its component references resolved. */
function compile(schema: unknown) {
  const pointed = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll("#/components/schemas/", "#/$defs/"));
  return new Ajv2020({ strict: true, allowUnionTypes: true }).compile({ $defs: pointed(document.components.schemas), ...pointed(schema) });
}

describe("GET /openapi.json webhooks", () => {
  test("names every event type, each a POST with the Standard Webhooks headers, the Event body and the receiver's answers", () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const post = document.webhooks[type].post;
      expect(post.parameters.map((p: any) => [p.name, p.in, p.required])).toEqual([
        ["webhook-id", "header", true],
        ["webhook-timestamp", "header", true],
        ["webhook-signature", "header", true],
      ]);
      const schema = post.requestBody.content["application/json"].schema;
      // the events API's schema of the type's family: its data typed
      const family = {
        document: "DocumentEvent",
        pipeline: "PipelineEvent",
        schema: "SchemaEvent",
        webhook: "WebhookEvent",
        job: "JobEvent",
        index: "IndexEvent",
      }[type.split(".")[0]!];
      expect(schema.allOf[0]).toEqual({ $ref: `#/components/schemas/${family}` });
      expect(schema.allOf[1].properties.type).toEqual({ const: type });
      expect(Object.keys(post.responses).sort()).toEqual(["2XX", "default"]);
      // every schema compiles under ajv strict mode
      expect(() => compile(schema)).not.toThrow();
    }
    // the families' schemas are the events API's: the list's items are one of them
    const list = document.paths["/api/v1/events"].get.responses[200].content["application/json"].schema;
    expect(document.components.schemas[list.$ref.split("/").pop()].properties.events.items).toEqual({ $ref: "#/components/schemas/Event" });
    expect(document.components.schemas.Event.anyOf).toEqual(
      ["DocumentEvent", "PipelineEvent", "SchemaEvent", "WebhookEvent", "JobEvent", "IndexEvent"].map((name) => ({
        $ref: `#/components/schemas/${name}`,
      })),
    );
    expect(document.components.schemas.DocumentEvent.properties.data).toEqual({ $ref: "#/components/schemas/DocumentEventData" });
    expect(new Set(Object.values<any>(document.webhooks).map((item) => item.post.operationId)).size).toBe(EVENT_TYPES.length);
  });

  test("a real delivery's body validates against its entry's schema and its signature verifies", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url: receiver.url } });
    expect(created.status).toBe(201);
    const doc = await t.json("POST", "/api/v1/documents", { key, body: { name: "doc", folder: "a", content: { a: 1 } } });
    expect(doc.status).toBe(201);
    expect((await t.json("PUT", `/api/v1/documents/${doc.body.document.id}/content`, { key, body: { a: 2 } })).status).toBe(200);
    expect((await t.json("DELETE", `/api/v1/documents/${doc.body.document.id}`, { key })).status).toBe(200);
    const received = await receiver.waitFor(3);
    const verifier = new Webhook(created.body.secret);
    const types = new Set<string>();
    for (const delivery of received) {
      const event = verifier.verify(delivery.body, delivery.headers) as any;
      types.add(event.type);
      const validate = compile(document.webhooks[event.type].post.requestBody.content["application/json"].schema);
      expect([event.type, validate(JSON.parse(delivery.body)), validate.errors ?? null]).toEqual([event.type, true, null]);
      // and not against another type's entry
      const other = document.webhooks["pipeline.created"].post.requestBody.content["application/json"].schema;
      expect(compile(other)(JSON.parse(delivery.body))).toBe(false);
    }
    expect([...types].sort()).toEqual(["document.content_replaced", "document.created", "document.deleted"]);
  });
});
