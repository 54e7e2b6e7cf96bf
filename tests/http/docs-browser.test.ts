/**
 * GET /docs renders the API reference offline: a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core) loads the page with every request that does not go to Kiln blocked, the operations
 * appear, and a screenshot is saved (its path is printed). Where chromium is not installed, the test
 * says why it was skipped (.ci/run installs it).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { createTestApp, type TestApp } from "../support/app";

setDefaultTimeout(120_000);

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available) console.log(`skipped: /docs browser check: ${CHROMIUM} is not installed (apt-get install -y chromium)`);

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let context: BrowserContext;
let profile: string;

beforeAll(async () => {
  if (!available) return;
  t = await createTestApp();
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => t.app.handle(request) });
  profile = mkdtempSync(join(tmpdir(), "kiln-chromium-"));
  // A fresh profile (playwright passes it as --user-data-dir).
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport: { width: 1400, height: 1000 },
    headless: true,
    chromiumSandbox: false,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});
afterAll(async () => {
  if (!available) return;
  await context?.close();
  server?.stop(true);
  await t?.close();
  rmSync(profile, { recursive: true, force: true });
});

describe("GET /docs in a headless browser", () => {
  test.skipIf(!available)("renders every API area and the operations with nothing fetched from outside Kiln", async () => {
    const origin = `http://127.0.0.1:${server.port}`;
    const blocked: string[] = [];
    const served: string[] = [];
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(origin + "/")) {
        served.push(url);
        return route.continue();
      }
      blocked.push(url);
      return route.abort("blockedbyclient");
    });
    const page = await context.newPage();
    const response = await page.goto(`${origin}/docs`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    await page.getByText("Create a document").first().waitFor({ state: "visible", timeout: 60_000 });
    const artifacts = join(tmpdir(), "kiln-artifacts");
    mkdirSync(artifacts, { recursive: true });
    const screenshot = join(artifacts, `docs-${Date.now()}.png`);
    await page.screenshot({ path: screenshot });
    console.log(
      `/docs screenshot: ${screenshot}${blocked.length ? `; blocked outside requests: ${blocked.join(", ")}` : "; no outside request was attempted"}`,
    );
    expect(existsSync(screenshot)).toBe(true);

    // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator, not a DOM node: the text as rendered
    const text = await page.locator("body").innerText();
    for (const expected of ["Documents", "Utilities", "Admin", "Create a document", "Get document metadata"])
      expect(text).toContain(expected);
    // the request panel starts on the bearer scheme, ready for a key
    expect(text).toContain("Selected Auth Type: bearerAuth");
    expect(text).not.toContain("No authentication selected");
    expect(served).toContain(`${origin}/docs/standalone.js`);
    expect(served).toContain(`${origin}/openapi.json`);
  });
});
