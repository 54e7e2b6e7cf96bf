/**
 * createTestApp(): the real app (createApp) over a fresh database, with a bootstrap admin key and a
 * small request helper. Tests call app.handle in-process; nothing listens.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type KilnApp } from "../../src/app";
import { type Config, loadConfig } from "../../src/config";
import type { AccountLimits, Permission, PlanName } from "../../src/core/plans";
import { createWorkerPool, type WorkerPool } from "../../src/engine/pool";
import type { RateCounter } from "../../src/http/rate-limit";
import { bootstrap, createAccount, createKey } from "../../src/modules/admin/service";
import { createLogger } from "../../src/observability/logger";
import type { ContentStore } from "../../src/storage/content-store";
import { registry as defaultUtilityRegistry, type UtilityRegistry } from "../../src/utilities/registry";
import { createTestDatabase, type TestDatabase } from "./database";

export const ADMIN_KEY = "kiln_TestBootstrapKey0123456789abcdefABCDEF";

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** sent as is (a string or bytes), for malformed or exact bodies */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface TestApp {
  app: KilnApp;
  config: Config;
  testDb: TestDatabase;
  workerPool: WorkerPool;
  logLines: string[];
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** request + parsed JSON body */
  json<T = any>(method: string, path: string, options?: RequestOptions): Promise<{ status: number; headers: Headers; body: T }>;
  /** a new account (plan and limits as given) with a key holding the given permissions */
  newAccount(
    options?: { plan?: PlanName; permissions?: Permission[] } & Partial<AccountLimits>,
  ): Promise<{ accountId: string; key: string }>;
  close(): Promise<void>;
}

export async function createTestApp(
  env: Record<string, string> = {},
  extra: {
    now?: () => number;
    utilityRegistry?: UtilityRegistry;
    contentStore?: (dataDir: string) => ContentStore;
    rateCounter?: RateCounter;
  } = {},
): Promise<TestApp> {
  const testDb = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), "kiln-test-data-"));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "info", ...env });
  const logLines: string[] = [];
  const logger = createLogger(config.logLevel, (line) => logLines.push(line));
  await bootstrap(testDb.database.db, ADMIN_KEY);
  const utilityRegistry = extra.utilityRegistry ?? defaultUtilityRegistry;
  // Not started: workers spawn on the first run that needs one, so test files that never use them pay nothing.
  const workerPool = createWorkerPool(config, utilityRegistry.module);
  const contentStore = extra.contentStore?.(config.dataDir);
  const app = createApp({
    config,
    database: testDb.database,
    logger,
    now: extra.now,
    workerPool,
    utilityRegistry,
    contentStore,
    rateCounter: extra.rateCounter,
  });

  const request = (method: string, path: string, options: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? ADMIN_KEY : options.key;
    if (key !== null) headers.authorization ??= `Bearer ${key}`;
    let body: string | Uint8Array | undefined = options.rawBody;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers["content-type"] ??= "application/json";
    return app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
  };

  return {
    app,
    config,
    testDb,
    workerPool,
    logLines,
    request,
    async json(method, path, options) {
      const response = await request(method, path, options);
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    },
    async newAccount(options = {}) {
      const { permissions = ["documents", "utilities"], plan, ...limits } = options;
      const account = await createAccount(testDb.database.db, { name: `test-${Bun.randomUUIDv7()}`, plan, ...limits });
      const { key } = await createKey(testDb.database.db, { accountId: account.id, permissions });
      return { accountId: account.id, key };
    },
    async close() {
      await workerPool.stop();
      await testDb.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
