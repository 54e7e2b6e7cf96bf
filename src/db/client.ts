/**
 * createDatabase(config): postgres.js to DATABASE_URL, or to an embedded PostgreSQL started in
 * DATA_DIR/pg. Both go through the same Drizzle schema and migrations.
 */

import { fileURLToPath } from "node:url";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres, { type Sql } from "postgres";
import { CONNECTION_LIMITS_DEFAULT, type ConnectionLimits } from "../config";
import { startEmbeddedPostgres } from "./embedded";
import { LOCKS } from "./locks";
import { assertOutsideTransaction, inTransactionScope, poolGuardEnabled } from "./pool-guard";
import * as schema from "./schema";

/** `$client`: the postgres.js client under Drizzle, which runs the hand-written statements (statement.ts). */
export type Db = PostgresJsDatabase<typeof schema> & { $client: Sql };

export interface Database {
  readonly db: Db;
  readonly sql: Sql;
  /** true when the database answers a trivial query within a second */
  ping(): Promise<boolean>;
  /** how long queries have waited for a pool connection with none coming free (ms; 0: none waiting) */
  stalledForMs(): number;
  /** closes the pool, giving running queries `timeoutMs` (default 5 s), then stops an embedded server */
  close(timeoutMs?: number): Promise<void>;
}

const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));

/**
 * How long opening a connection may take (DATABASE_CONNECT_TIMEOUT_MS): a database that cannot be
 * reached answers a waiting request 503 after this, at start-up a clear message.
 */
export const DATABASE_CONNECT_TIMEOUT_MS_DEFAULT = 5_000;
const connectTimeoutSeconds = (ms: number | undefined) => Math.max(1, Math.ceil((ms ?? DATABASE_CONNECT_TIMEOUT_MS_DEFAULT) / 1000));

/** Applies the committed migrations under an advisory lock, so processes sharing a database take turns. */
export async function runMigrations(url: string, connectTimeoutMs?: number): Promise<void> {
  const client = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: connectTimeoutSeconds(connectTimeoutMs) });
  try {
    await client`select pg_advisory_lock(${LOCKS.migrations})`;
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
    await client`select pg_advisory_unlock(${LOCKS.migrations})`;
  } finally {
    await client.end();
  }
}

/**
 * The pool's own entry points (a query, `unsafe`, a transaction, a reservation) check the pool guard
 * (pool-guard.ts); a transaction's callback runs in the guard's scope. The `sql` a transaction or a
 * reservation hands out is its own connection and is not checked.
 */
function guardingPool(client: Sql): Sql {
  type Call = (...args: unknown[]) => unknown;
  return new Proxy(client, {
    apply(target, thisArg, args: unknown[]) {
      if (Array.isArray((args[0] as { raw?: unknown } | undefined)?.raw)) assertOutsideTransaction();
      return Reflect.apply(target, thisArg, args);
    },
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === "unsafe" || property === "reserve")
        return (...args: unknown[]) => {
          assertOutsideTransaction();
          return (value as Call).apply(target, args);
        };
      if (property === "begin")
        return (...args: unknown[]) => {
          assertOutsideTransaction();
          const work = args.at(-1) as Call;
          return (value as Call).apply(target, [...args.slice(0, -1), (inner: unknown) => inTransactionScope(async () => work(inner))]);
        };
      return value;
    },
  });
}

/**
 * Drizzle asks postgres.js not to prepare queries it was not given a name for, so every query with
 * parameters costs an extra describe round trip and a fresh plan. postgres.js caches prepared
 * statements per connection by their text, and Kiln's query shapes are a small fixed set, so this
 * client prepares them all (transactions and savepoints included). Measured in bench/README.md.
 */
function preparingAll(client: Sql): Sql {
  type Unsafe = (query: string, params?: unknown[], options?: Record<string, unknown>) => unknown;
  type Scoped = (...args: unknown[]) => unknown;
  const wrapScoped =
    (method: Scoped) =>
    (...args: unknown[]) =>
      method(...args.map((arg) => (typeof arg === "function" ? (inner: Sql) => (arg as (s: Sql) => unknown)(preparingAll(inner)) : arg)));
  const prepared = { prepare: true };
  // made once, not on every read of `unsafe` (every statement reads it)
  const unsafe = (query: string, params?: unknown[], options?: Record<string, unknown>) =>
    (client.unsafe as Unsafe).call(
      client,
      query,
      params,
      options === undefined ? prepared : options.prepare === true ? options : { ...options, prepare: true },
    );
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "unsafe") return unsafe;
      const value = Reflect.get(target, property, receiver);
      if (property === "begin" || property === "savepoint") return wrapScoped((value as Scoped).bind(target));
      return value;
    },
  });
}

export function connect(
  url: string,
  options: { poolMax?: number; connectTimeoutMs?: number; limits?: ConnectionLimits; onClose?: () => Promise<void> } = {},
): Database {
  const onClose = options.onClose ?? (async () => {});
  const limits = options.limits ?? CONNECTION_LIMITS_DEFAULT;
  const pool = postgres(url, {
    max: options.poolMax ?? 20,
    onnotice: () => {},
    connect_timeout: connectTimeoutSeconds(options.connectTimeoutMs),
    connection: {
      lock_timeout: limits.lockTimeoutMs,
      statement_timeout: limits.statementTimeoutMs,
      idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    },
    // patches/postgres@3.4.9.patch
    ...({ acquire_timeout: limits.acquireTimeoutMs || null } as object),
  });
  const sql = poolGuardEnabled() ? guardingPool(pool) : pool;
  return {
    db: drizzle(preparingAll(sql), { schema }),
    sql,
    async ping() {
      try {
        await Promise.race([sql`select 1`, new Promise((_, reject) => setTimeout(reject, 1000))]);
        return true;
      } catch {
        return false;
      }
    },
    stalledForMs() {
      const since = (pool as unknown as { stalledSince: number | null }).stalledSince;
      return since === null ? 0 : performance.now() - since;
    },
    async close(timeoutMs = 5_000) {
      await pool.end({ timeout: timeoutMs / 1000 });
      await onClose();
    },
  };
}

export async function createDatabase(
  options: {
    databaseUrl?: string;
    dataDir: string;
    databasePoolMax?: number;
    databaseConnectTimeoutMs?: number;
    databaseLimits?: ConnectionLimits;
  },
  log: (message: string) => void = () => {},
): Promise<Database> {
  if (options.databaseUrl) {
    await runMigrations(options.databaseUrl, options.databaseConnectTimeoutMs);
    return connect(options.databaseUrl, {
      poolMax: options.databasePoolMax,
      connectTimeoutMs: options.databaseConnectTimeoutMs,
      limits: options.databaseLimits,
    });
  }
  const embedded = await startEmbeddedPostgres(options.dataDir, log);
  try {
    await runMigrations(embedded.url);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return connect(embedded.url, { poolMax: options.databasePoolMax, limits: options.databaseLimits, onClose: () => embedded.stop() });
}
