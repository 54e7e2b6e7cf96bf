import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ndjsonLines } from "../../../src/modules/documents/transfer";
import { createTestApp, type TestApp } from "../../support/app";

// test apps, worker threads and real servers take seconds on a loaded machine
setDefaultTimeout(60_000);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const encoder = new TextEncoder();

async function exportText(key: string, query = ""): Promise<{ status: number; type: string | null; text: string }> {
  const response = await t.request("GET", `/api/v1/export${query}`, { key });
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

const linesOf = (text: string) => text.split("\n").filter((line) => line !== "");

async function importText(key: string, body: string | Uint8Array | ReadableStream<Uint8Array>): Promise<Response> {
  return t.app.handle(
    new Request("http://localhost/api/v1/import", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
      body,
    }),
  );
}

async function importResults(key: string, body: string): Promise<any[]> {
  const response = await importText(key, body);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/x-ndjson");
  return linesOf(await response.text()).map((line) => JSON.parse(line));
}

async function createRaw(key: string, json: string): Promise<string> {
  const response = await t.request("POST", "/api/v1/documents", { key, rawBody: json });
  expect(response.status).toBe(201);
  return ((await response.json()) as any).document.id;
}

const rawContent = async (key: string, id: string) =>
  new Uint8Array(await (await t.request("GET", `/api/v1/documents/${id}/content`, { key })).arrayBuffer());

describe("export and import round trip", () => {
  test("export from A and import into B: same metadata, byte-identical content", async () => {
    const a = await t.newAccount();
    const b = await t.newAccount();
    const written = [
      `{"name":"numbers","folder":"reports/2024","tags":["q1","big"],"description":"exact numbers","content":{"id":12345678901234567890,"ratio":1.0,"neg":-0}}`,
      `{"name":"pretty","folder":"reports","content":{\n  "a": [1, 2],\r\n  "b": "line\\nbreak"\n}}`,
      `{"name":"unicode ✓","tags":[],"contentText":"[\\"é\\", \\"😀\\", 1e400]"}`,
      `{"name":"scalar","content":"just a string"}`,
    ];
    const ids = [];
    for (const body of written) ids.push(await createRaw(a.key, body));

    const exported = await exportText(a.key);
    expect(exported.status).toBe(200);
    expect(exported.type).toBe("application/x-ndjson");
    const lines = linesOf(exported.text);
    expect(lines.length).toBe(4);
    expect(lines[0]).toContain(`"content":{"id":12345678901234567890,"ratio":1.0,"neg":-0}}`);
    expect(lines.map((line) => JSON.parse(line).document.id)).toEqual(ids);

    const results = await importResults(b.key, exported.text);
    expect(results.map((result) => result.line)).toEqual([1, 2, 3, 4]);
    for (const result of results) expect(result.id).toMatch(/^doc_/);

    const listA = (await t.json("GET", "/api/v1/documents", { key: a.key })).body.documents;
    const listB = (await t.json("GET", "/api/v1/documents", { key: b.key })).body.documents;
    const metadata = (docs: any[]) =>
      docs.map(({ name, folder, tags, description, fileSize }) => ({ name, folder, tags, description, fileSize }));
    expect(metadata(listB)).toEqual(metadata(listA));
    for (let i = 0; i < ids.length; i++) {
      expect(await rawContent(b.key, results[i].id)).toEqual(await rawContent(a.key, ids[i]));
    }
    expect(new TextDecoder().decode(await rawContent(b.key, results[0].id))).toBe(`{"id":12345678901234567890,"ratio":1.0,"neg":-0}`);
    expect(new TextDecoder().decode(await rawContent(b.key, results[1].id))).toBe(`{\n  "a": [1, 2],\r\n  "b": "line\\nbreak"\n}`);

    const again = await exportText(b.key);
    const strip = (text: string) =>
      linesOf(text).map((line) => {
        const { document, ...rest } = JSON.parse(line);
        return rest;
      });
    expect(strip(again.text)).toEqual(strip(exported.text));
  });

  test("content with line breaks is exported as contentText, one line per document", async () => {
    const { key } = await t.newAccount();
    await createRaw(key, `{"name":"pretty","content":[\n1,\n2\n]}`);
    const lines = linesOf((await exportText(key)).text);
    expect(lines.length).toBe(1);
    expect(JSON.parse(lines[0]).contentText).toBe("[\n1,\n2\n]");
  });

  test("a large content file is streamed into its line byte for byte", async () => {
    const { key } = await t.newAccount();
    const big = JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ i, text: "x".repeat(10) })) });
    const id = await createRaw(key, `{"name":"big","contentText":${JSON.stringify(big)}}`);
    const pretty = JSON.stringify(JSON.parse(big), null, 1);
    await createRaw(key, `{"name":"big pretty","contentText":${JSON.stringify(pretty)}}`);
    const lines = linesOf((await exportText(key)).text);
    expect(lines[0]).toBe(
      `{"document":${JSON.stringify((await t.json("GET", `/api/v1/documents/${id}`, { key })).body.document)},"content":${big}}`,
    );
    expect(JSON.parse(lines[1]).contentText).toBe(pretty);
  });

  test("many small documents: gathered into few chunks, every line byte for byte across the chunk boundaries", async () => {
    const { key } = await t.newAccount();
    const written: string[] = [];
    for (let i = 0; i < 300; i++) {
      const raw = i % 7 === 3 ? `{"n":${i},\n"text":"${"é".repeat(i)}"}` : `{"n":${i},"text":"${"😀".repeat(i % 50)}${"x".repeat(600)}"}`;
      written.push(raw);
      await createRaw(key, `{"name":"doc ${i} ✓","folder":"many","contentText":${JSON.stringify(raw)}}`);
    }
    const exactlyFull = `"${"z".repeat(64 * 1024 - 2)}"`;
    written.push(exactlyFull);
    await createRaw(key, `{"name":"exactly 64 KiB","folder":"many","contentText":${JSON.stringify(exactlyFull)}}`);

    const response = await t.request("GET", "/api/v1/export?folder=many", { key });
    let chunks = 0;
    const parts: Uint8Array[] = [];
    for await (const chunk of response.body!) {
      chunks++;
      parts.push(chunk);
    }
    const lines = linesOf(new TextDecoder().decode(Buffer.concat(parts)));
    expect(lines.length).toBe(written.length);
    lines.forEach((line, i) => {
      const { document, contentText } = JSON.parse(line);
      const expected = written[i].includes("\n")
        ? `{"document":${JSON.stringify(document)},"contentText":${JSON.stringify(written[i])}}`
        : `{"document":${JSON.stringify(document)},"content":${written[i]}}`;
      expect(line).toBe(expected);
      if (contentText !== undefined) expect(contentText).toBe(written[i]);
    });
    expect(chunks).toBeLessThan(20);
  });

  test("folder, recursive and deleted filter the export as they filter the list", async () => {
    const { key } = await t.newAccount();
    await createRaw(key, `{"name":"in a","folder":"a","content":1}`);
    await createRaw(key, `{"name":"in a/b","folder":"a/b","content":2}`);
    await createRaw(key, `{"name":"in ab","folder":"ab","content":4}`);
    const gone = await createRaw(key, `{"name":"deleted","folder":"a/b","content":3}`);
    expect((await t.request("DELETE", `/api/v1/documents/${gone}`, { key })).status).toBe(200);
    const names = async (query: string) => linesOf((await exportText(key, query)).text).map((line) => JSON.parse(line).document.name);
    expect(await names("?folder=/a/")).toEqual(["in a"]);
    expect(await names("?folder=a&recursive=true")).toEqual(["in a", "in a/b"]);
    expect(await names("?folder=a&recursive=false")).toEqual(["in a"]);
    expect(await names("?folder=")).toEqual(["in a", "in a/b", "in ab"]);
    expect(await names("?deleted=true")).toEqual(["deleted"]);
    expect(await names("?deleted=true&folder=a&recursive=true")).toEqual(["deleted"]);
    expect(await names("?deleted=false&folder=a/b")).toEqual(["in a/b"]);
  });

  test("an empty account exports nothing; a bad folder, recursive or deleted value is 400", async () => {
    const { key } = await t.newAccount();
    expect(await exportText(key)).toEqual({ status: 200, type: "application/x-ndjson", text: "" });
    expect((await t.json("GET", "/api/v1/export?folder=a/../b", { key })).body.code).toBe("validation_failed");
    expect((await t.request("GET", "/api/v1/export?deleted=maybe", { key })).status).toBe(400);
    expect((await t.json("GET", "/api/v1/export?folder=a&recursive=yes", { key })).body.errors[0].path).toBe("/recursive");
  });
});

describe("import line by line", () => {
  test("each bad line gets its own error and the others go on", async () => {
    const { key } = await t.newAccount({ maxDocumentBytes: 100 });
    const body =
      [
        `{"document":{"name":"first","id":"doc_ignored","fileSize":1},"content":{"ok":true}}`,
        `this is not json`,
        `{"document":{"folder":"x"},"content":1}`,
        `{"document":{"name":"too big"},"content":"${"y".repeat(200)}"}`,
        `{"document":{"name":"bad text"},"contentText":"{not json"}`,
        ``,
        `{"document":{"name":"no content"}}`,
        `{"document":{"name":"bad tags","tags":"a"},"content":1}`,
        `[1,2]`,
        `{"document":{"name":"last","tags":["t"]},"content":[1.0]}`,
      ].join("\n") + "\n";
    const results = await importResults(key, body);
    expect(results.map((result) => result.line)).toEqual([1, 2, 3, 4, 5, 7, 8, 9, 10]);
    const codes = results.map((result) => result.error?.code ?? "ok");
    expect(codes).toEqual([
      "ok",
      "malformed_json",
      "validation_failed",
      "document_too_large",
      "validation_failed",
      "validation_failed",
      "validation_failed",
      "validation_failed",
      "ok",
    ]);
    expect(results[2].error.detail).toContain("/document/name");
    expect(results[4].error.detail).toContain("/contentText");
    expect(results[6].error.detail).toContain("/document/tags");
    const documents = (await t.json("GET", "/api/v1/documents", { key })).body.documents;
    expect(documents.map((document: any) => document.name).sort()).toEqual(["first", "last"]);
    expect(documents.find((document: any) => document.name === "first").id).not.toBe("doc_ignored");
    expect(new TextDecoder().decode(await rawContent(key, results[9 - 1].id))).toBe("[1.0]");
  });

  test("the storage quota is checked line by line", async () => {
    const { key } = await t.newAccount({ storageLimitBytes: 25 });
    const line = (name: string) => `{"document":{"name":"${name}"},"content":"0123456789"}`;
    const results = await importResults(key, [line("a"), line("b"), line("c")].join("\n"));
    expect(results.map((result) => (result.id ? "ok" : result.error.code))).toEqual(["ok", "ok", "storage_limit_exceeded"]);
  });

  test("the body is read as it arrives: the first result comes back before the rest is sent", async () => {
    const { key } = await t.newAccount();
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        feed = controller;
      },
    });
    feed.enqueue(encoder.encode(`{"document":{"name":"one"},"content":1}\n{"document":{"na`));
    const response = await importText(key, body);
    const reader = response.body!.getReader();
    const first = JSON.parse(new TextDecoder().decode((await reader.read()).value));
    expect(first).toMatchObject({ line: 1, id: expect.stringMatching(/^doc_/) });
    feed.enqueue(encoder.encode(`me":"two"},"content":2}`));
    feed.close();
    const second = JSON.parse(new TextDecoder().decode((await reader.read()).value));
    expect(second).toMatchObject({ line: 2, id: expect.stringMatching(/^doc_/) });
    expect((await reader.read()).done).toBe(true);
  });

  test("the results of an import are never held back by compression", async () => {
    const { key } = await t.newAccount();
    const lines = Array.from(
      { length: 30 },
      (_, i) => `{"document":{"name":"n${i}","description":"${"d".repeat(100)}"},"content":${i}}`,
    ).join("\n");
    const response = await t.app.handle(
      new Request("http://localhost/api/v1/import", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson", "accept-encoding": "gzip, br" },
        body: lines,
      }),
    );
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(linesOf(await response.text()).length).toBe(30);
  });

  test("another Content-Type is 415; no key is 401; a key without documents is 403", async () => {
    const { key } = await t.newAccount();
    const wrongType = await t.request("POST", "/api/v1/import", { key, rawBody: `{"document":{"name":"x"},"content":1}` });
    expect(wrongType.status).toBe(415);
    expect(((await wrongType.json()) as any).code).toBe("unsupported_media_type");
    expect((await importText("kiln_not_a_key_at_all_0000000000", "")).status).toBe(401);
    const utilitiesOnly = await t.newAccount({ permissions: ["utilities"] });
    expect((await importText(utilitiesOnly.key, "")).status).toBe(403);
    expect((await t.request("GET", "/api/v1/export", { key: utilitiesOnly.key })).status).toBe(403);
  });

  test("an empty body imports nothing", async () => {
    const { key } = await t.newAccount();
    expect(await importResults(key, "")).toEqual([]);
  });
});

describe("ndjsonLines", () => {
  async function* chunks(...parts: string[]) {
    for (const part of parts) yield encoder.encode(part);
  }
  const collect = async (source: AsyncIterable<Uint8Array>, max = 100) => {
    const lines = [];
    for await (const line of ndjsonLines(source, max))
      lines.push("tooLong" in line ? [line.number, "too long"] : [line.number, new TextDecoder().decode(line.bytes)]);
    return lines;
  };

  test("lines split across chunks, CRLF, blank lines and a last line without a break", async () => {
    expect(await collect(chunks("ab", "c\r\n\n  \nde", "f\ng"))).toEqual([
      [1, "abc\r"],
      [4, "def"],
      [5, "g"],
    ]);
  });

  test("a line over the limit is reported, skipped to its end, and the next line is read", async () => {
    expect(await collect(chunks("x".repeat(60), "x".repeat(60), "\nok\n", "y".repeat(101)), 100)).toEqual([
      [1, "too long"],
      [2, "ok"],
      [3, "too long"],
    ]);
  });
});
