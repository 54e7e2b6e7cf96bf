/**
 * Where webhooks may go without WEBHOOK_ALLOW_PRIVATE_NETWORKS: https only, and only to public addresses,
 * checked when a webhook is saved and again at every attempt after resolving its name, the connection
 * then made to the address that was checked (DNS rebinding gains nothing).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { type Lookup, refusedAddress } from "../../../src/modules/webhooks/address";
import { checkUrl } from "../../../src/modules/webhooks/service";
import { createTestApp, type TestApp } from "../../support/app";
import { eventually, startDeliverer } from "./support";

setDefaultTimeout(30_000);

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_TIMEOUT_MS: "2000" });
  key = (await t.newAccount({ permissions: ["documents", "webhooks"] })).key;
});
afterAll(async () => {
  await t.close();
});

describe("refusedAddress", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.254", "carrier-grade NAT"],
    ["0.0.0.0", "this network"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fd00:ec2::254", "unique-local"],
    ["fc00::1", "unique-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["2002:7f00:1::", "loopback"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    // IPv4 embedded in IPv6, every form: SIIT-translated, compatible, 6to4; and the NAT64 prefixes
    ["::ffff:0:127.0.0.1", "loopback"],
    ["::ffff:0:a9fe:a9fe", "link-local"],
    ["::127.0.0.1", "loopback"],
    ["::a00:1", "private"],
    ["2002:a00:1::1", "private"],
    ["2002:a9fe:a9fe::", "link-local"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b:1::a00:1", "local-use NAT64"],
    ["64:ff9b:1::808:808", "local-use NAT64"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    // nothing outside 2000::/3 is public unicast
    ["64:ff9b:0:0:1::", "not a global unicast"],
    ["4000::1", "not a global unicast"],
    ["1::1", "not a global unicast"],
  ])("%s is refused (%s)", (address, kind) => {
    expect(refusedAddress(address)).toContain(kind);
  });

  test.each([
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "169.255.0.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "::ffff:0:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "3fff:f000::1",
  ])("%s is public", (address) => {
    expect(refusedAddress(address)).toBeUndefined();
  });
});

describe("at creation", () => {
  test.each([
    ["http://example.com/hook", "https://"],
    ["ftp://example.com/hook", "https://"],
    ["https://user:pass@example.com/hook", "user name or password"],
    ["https://example.com/hook#frag", "fragment"],
    ["not a url", "absolute"],
    ["https://127.0.0.1/hook", "loopback"],
    ["https://10.0.0.5/hook", "private"],
    ["https://169.254.169.254/latest/meta-data", "link-local"],
    ["https://[fd00:ec2::254]/", "unique-local"],
    ["https://[::1]:8443/", "loopback"],
    ["https://[::ffff:127.0.0.1]/", "loopback"],
    ["https://100.64.1.1/", "carrier-grade NAT"],
    ["https://localhost:8443/hook", "loopback"],
    // a trailing dot is the same name (the system resolver knows only `localhost`) or the same address
    ["https://localhost./hook", "localhost resolves to"],
    ["https://localhost../hook", "localhost resolves to"],
    ["https://127.0.0.1./hook", "loopback"],
    ["https://./hook", "names no host"],
    ["https://[::ffff:0:127.0.0.1]/", "loopback"],
    ["https://[::127.0.0.1]/", "loopback"],
    ["https://[64:ff9b:1::a00:1]/", "local-use NAT64"],
    ["https://[2002:a00:1::1]/", "private"],
    ["https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo"],
  ])("%s → 400 webhook_url_refused (%s)", async (url, words) => {
    const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url } });
    expect(created.status).toBe(400);
    expect(created.body.code).toBe("webhook_url_refused");
    expect(created.body.errors[0].path).toBe("/url");
    expect(created.body.detail).toContain(words);
  });

  test("the same checks on an edit", async () => {
    const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url: "https://hooks.example.invalid/in" } });
    expect(created.status).toBe(201);
    const edited = await t.json("PATCH", `/api/v1/webhooks/${created.body.webhook.id}`, { key, body: { url: "https://192.168.0.10/" } });
    expect(edited.status).toBe(400);
    expect(edited.body.code).toBe("webhook_url_refused");
    expect((await t.json("DELETE", `/api/v1/webhooks/${created.body.webhook.id}`, { key })).status).toBe(200);
  });

  test("a name is resolved: refused when any of its addresses is not public; accepted when it does not resolve (yet)", async () => {
    const config = t.config.webhooks;
    const lookup: Lookup = async (host) =>
      host === "mixed.test"
        ? [
            { address: "93.184.216.34", family: 4 },
            { address: "10.0.0.7", family: 4 },
          ]
        : host === "public.test"
          ? [{ address: "93.184.216.34", family: 4 }]
          : Promise.reject(Object.assign(new Error("not found"), { code: "ENOTFOUND" }));
    await expect(checkUrl("https://mixed.test/x", config, lookup)).rejects.toThrow("mixed.test resolves to 10.0.0.7, a private address");
    expect(await checkUrl("https://public.test/x", config, lookup)).toBe("https://public.test/x");
    expect(await checkUrl("https://nowhere.test/x", config, lookup)).toBe("https://nowhere.test/x");
    // with the flag, http and private addresses are allowed
    const open = { ...config, allowPrivateNetworks: true };
    expect(await checkUrl("http://127.0.0.1:9/x", open, lookup)).toBe("http://127.0.0.1:9/x");
  });
});

describe("at delivery", () => {
  test("a name that resolves to 127.0.0.1 by then (localhost, through the system resolver) is refused: no request is made", async () => {
    const { key: own } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    let reached = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (reached++, new Response(null, { status: 200 })) });
    const created = await t.json("POST", "/api/v1/webhooks", { key: own, body: { url: "https://rebinding.example.invalid/hook" } });
    expect(created.status).toBe(201);
    // the name now resolves to a loopback address (as DNS rebinding would make it): here, localhost
    await t.testDb.database.sql`update webhooks set url = ${`https://localhost:${server.port}/hook`} where id = ${created.body.webhook.id}`;
    const deliverer = startDeliverer(t);
    try {
      await t.json("POST", "/api/v1/documents", { key: own, body: { name: "a", content: 1 } });
      const delivery = await eventually(async () => {
        const [row] = (await t.json("GET", `/api/v1/webhooks/${created.body.webhook.id}/deliveries`, { key: own })).body.deliveries;
        return row?.attemptLog?.length ? row : undefined;
      });
      expect(delivery.attemptLog[0].statusCode).toBeNull();
      expect(delivery.attemptLog[0].error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
      expect(reached).toBe(0);
    } finally {
      await deliverer.stop();
      server.stop(true);
    }
  });

  const certificate = (() => {
    const dir = mkdtempSync(join(tmpdir(), "kiln-webhook-tls-"));
    const made = Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=hooks.test",
        "-addext",
        "subjectAltName=DNS:hooks.test",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stderr: "pipe" },
    );
    if (made.exitCode !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
    const pair = { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
    rmSync(dir, { recursive: true, force: true });
    return pair;
  })();

  test("the connection goes to the address that was checked: https to a name only the injected resolver knows, SNI and certificate checked for the name", async () => {
    const { key: own } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const received: { host: string | null; body: string; headers: Record<string, string> }[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: certificate,
      async fetch(request) {
        received.push({ host: request.headers.get("host"), body: await request.text(), headers: Object.fromEntries(request.headers) });
        return new Response(null, { status: 204 });
      },
    });
    const lookups: string[] = [];
    // hooks.test resolves (here only) to 127.0.0.1, which this test lets through; the system resolver does not know the name
    const lookup: Lookup = async (host) => {
      lookups.push(host);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const created = await t.json("POST", "/api/v1/webhooks", { key: own, body: { url: `https://hooks.test:${server.port}/in` } });
    expect(created.status).toBe(201);
    const deliverer = startDeliverer(t, {
      lookup,
      refused: (address) => (address === "127.0.0.1" ? undefined : refusedAddress(address)),
      tls: { ca: certificate.cert },
    });
    try {
      await t.json("POST", "/api/v1/documents", { key: own, body: { name: "a", content: 1 } });
      await eventually(async () => (received.length > 0 ? true : undefined));
      expect(received[0]!.host).toBe(`hooks.test:${server.port}`);
      new Webhook(created.body.secret).verify(received[0]!.body, received[0]!.headers);
      expect(lookups).toEqual(["hooks.test"]);
    } finally {
      await deliverer.stop();
      server.stop(true);
    }
  });

  test("a name with one refused address among allowed ones is refused (rebinding to a second address gains nothing)", async () => {
    const { key: own } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    let reached = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (reached++, new Response(null, { status: 200 })) });
    const created = await t.json("POST", "/api/v1/webhooks", { key: own, body: { url: `https://two.test:${server.port}/in` } });
    const lookup: Lookup = async () => [
      { address: "127.0.0.1", family: 4 },
      { address: "169.254.169.254", family: 4 },
    ];
    const deliverer = startDeliverer(t, { lookup, refused: (address) => (address === "127.0.0.1" ? undefined : refusedAddress(address)) });
    try {
      await t.json("POST", "/api/v1/documents", { key: own, body: { name: "a", content: 1 } });
      const delivery = await eventually(async () => {
        const [row] = (await t.json("GET", `/api/v1/webhooks/${created.body.webhook.id}/deliveries`, { key: own })).body.deliveries;
        return row?.attemptLog?.length ? row : undefined;
      });
      expect(delivery.attemptLog[0].error).toBe(
        "refused: two.test resolves to 169.254.169.254, a link-local address (cloud metadata lives there)",
      );
      expect(reached).toBe(0);
    } finally {
      await deliverer.stop();
      server.stop(true);
    }
  });
});
