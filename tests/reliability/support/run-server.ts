/**
 * The real server on the database of the test run: the external PostgreSQL (a fresh database on the
 * server of TEST_DATABASE_URL) when it is set, else the embedded default in a fresh DATA_DIR. With a
 * bootstrap key; close() stops it and removes everything it made. `onTestServer` puts its database on the
 * test run's PostgreSQL server (the embedded one of tests/support/setup.ts) even without TEST_DATABASE_URL,
 * for tests that need another database of the same server (serverUrl()).
 */

import { createTestDatabase } from "../../support/database";
import { type RunningServer, removeDataDir, startServer, tempDataDir } from "../../support/server";

export interface RunServer {
  server: RunningServer;
  bootstrapKey: string;
  dataDir: string;
  /** a new account (no rate limit; `account` sets its other fields, such as its plan) with a key holding these permissions */
  newKey(permissions?: string[], account?: Record<string, unknown>): Promise<string>;
  /** a new account (no rate limit; `fields` sets its other fields): its id */
  newAccount(fields?: Record<string, unknown>): Promise<string>;
  /** one more key of an account */
  keyFor(accountId: string, permissions: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function startRunServer(env: Record<string, string> = {}, { onTestServer = false } = {}): Promise<RunServer> {
  const dataDir = tempDataDir();
  const external = process.env.TEST_DATABASE_URL || onTestServer ? await createTestDatabase() : undefined;
  await external?.database.close();
  const bootstrapKey = `kiln_RunServer${Bun.randomUUIDv7().replaceAll("-", "")}`;
  const server = await startServer({
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEY: bootstrapKey,
    ...(external ? { DATABASE_URL: external.url } : {}),
    ...env,
  });
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(server.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${bootstrapKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return response.json() as Promise<any>;
  };
  const newAccount = async (fields: Record<string, unknown> = {}): Promise<string> =>
    (await admin("/api/v1/admin/accounts", { name: "run", rateLimitPerMinute: null, ...fields })).account.id;
  const keyFor = async (accountId: string, permissions: string[]): Promise<string> =>
    (await admin("/api/v1/admin/keys", { accountId, permissions })).key;
  return {
    server,
    bootstrapKey,
    dataDir,
    newAccount,
    keyFor,
    async newKey(permissions = ["documents", "utilities"], fields = {}) {
      return keyFor(await newAccount(fields), permissions);
    },
    async close() {
      await server.stop("SIGKILL");
      await external?.drop();
      await removeDataDir(dataDir);
    },
  };
}
