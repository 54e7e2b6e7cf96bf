/**
 * Logs: one line per request, as JSON (the default) or, with LOG_FORMAT=pretty, as text for a person at
 * a terminal; and never a key, a document's content or a utility payload, whatever the request did
 * (success, validation error, malformed body, failed run, worker run, wrong key).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { createLogger } from "../../src/observability/logger";
import { type RunServer, startRunServer } from "../reliability/support/run-server";

// Hooks and tests start real servers (an embedded PostgreSQL each): slow on a loaded machine.
setDefaultTimeout(60_000);

test("LOG_FORMAT is json or pretty; METRICS_TOKEN needs 16 characters: other values stop the start naming the variable", () => {
  expect(loadConfig({}).logFormat).toBe("json");
  expect(loadConfig({ LOG_FORMAT: "pretty" }).logFormat).toBe("pretty");
  expect(() => loadConfig({ LOG_FORMAT: "xml" })).toThrow(new ConfigError("LOG_FORMAT must be one of json, pretty, got 'xml'"));
  expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(/^METRICS_TOKEN must be at least 16 characters/);
  expect(loadConfig({ METRICS_TOKEN: "0123456789abcdef" }).metricsToken).toBe("0123456789abcdef");
});

test("a pretty line: time, level, message, then the fields as key=value", () => {
  const lines: string[] = [];
  createLogger("info", (line) => lines.push(line), "pretty").log("info", "request", {
    method: "GET",
    path: "/x y",
    status: 200,
    accountId: undefined,
  });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}request method=GET path="\/x y" status=200$/);
});

for (const format of ["json", "pretty"] as const) {
  describe(`the real server with LOG_FORMAT=${format} at debug level`, () => {
    let run: RunServer;
    beforeAll(async () => {
      run = await startRunServer({ LOG_LEVEL: "debug", LOG_FORMAT: format, UTILITY_INLINE_MAX_BYTES: "256" });
    });
    afterAll(async () => {
      await run.close();
    });

    test("logs every request and never a key, a document's content or a utility payload", async () => {
      const marker = Bun.randomUUIDv7().replaceAll("-", "");
      const content = `CONTENT${marker}`;
      const payload = `PAYLOAD${marker}`;
      const key = await run.newKey(["documents", "utilities"]);
      const wrongKey = `kiln_WRONGKEY${marker}`;
      const send = (method: string, path: string, body?: string, bearer = key) =>
        fetch(run.server.url + path, { method, headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body });
      const statuses: number[] = [];
      const record = async (response: Promise<Response>) => {
        const answered = await response;
        const text = await answered.text();
        statuses.push(answered.status);
        return text;
      };

      const created = JSON.parse(
        await record(send("POST", "/api/v1/documents", JSON.stringify({ name: "doc.json", content: { secret: content } }))),
      ) as { document: { id: string } };
      const id = created.document.id;
      await record(send("POST", "/api/v1/documents", JSON.stringify({ name: "text.json", contentText: JSON.stringify([content]) })));
      await record(send("PUT", `/api/v1/documents/${id}/content`, JSON.stringify({ replaced: content })));
      await record(send("GET", `/api/v1/documents/${id}/content`));
      await record(send("POST", "/api/v1/documents", `{"name":"cut.json","content":"${content}`));
      await record(send("POST", "/api/v1/documents", JSON.stringify({ name: 5, content: content, extra: content })));
      await record(send("PUT", `/api/v1/documents/${id}`, JSON.stringify({ name: content.repeat(20) })));
      await record(
        send("POST", "/api/v1/utilities/structure.flatten-nest", JSON.stringify({ inputs: { primary: { a: { b: payload } } } })),
      );
      await record(
        send("POST", "/api/v1/utilities/structure.flatten-nest", JSON.stringify({ inputs: { primary: { a: { b: payload.repeat(20) } } } })),
      );
      await record(
        send(
          "POST",
          "/api/v1/utilities/convert.csv-to-json",
          JSON.stringify({ inputs: { primary: `a,b\n${payload},1` }, config: { delimiter: payload } }),
        ),
      );
      await record(
        send(
          "POST",
          "/api/v1/utilities/schema.compute",
          JSON.stringify({ inputs: { primary: [{ a: 1 }] }, config: { fields: [{ name: "x", expression: `${payload} +* (` }] } }),
        ),
      );
      await record(send("POST", "/api/v1/utilities/convert.json-to-csv", `{"inputs":{"primary":"${payload}`));
      await record(send("GET", "/api/v1/documents", undefined, wrongKey));
      await record(send("GET", `/api/v1/documents?access_token=${key}`, undefined, ""));
      expect(statuses.filter((status) => status >= 200 && status < 300).length).toBeGreaterThanOrEqual(5);
      expect(statuses.filter((status) => status >= 400).length).toBeGreaterThanOrEqual(6);

      await Bun.sleep(200); // log lines are written after the response went out
      const logged = run.server.output() + run.server.errors();
      for (const secret of [marker, key, key.slice("kiln_".length), run.bootstrapKey]) expect(logged).not.toContain(secret);
      const requestLines = logged
        .split("\n")
        .filter((line) => (format === "json" ? line.includes('"msg":"request"') : / (INFO|WARN|ERROR) +request /.test(line)));
      expect(requestLines.length).toBeGreaterThanOrEqual(statuses.length);
      if (format === "json") for (const line of logged.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
      else
        expect(
          requestLines.every((line) => /^\d\d:\d\d:\d\d\.\d{3} \w+ +request method=\w+ path=\S+ status=\d{3} durationMs=/.test(line)),
        ).toBe(true);
    });
  });
}
