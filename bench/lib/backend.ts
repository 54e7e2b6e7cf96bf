/**
 * One PostgreSQL backend to measure in: a fresh migrated database with one account (acc_bench), a
 * single connection with synchronous_commit off (so the WAL flush hides nothing), and that backend's CPU
 * time, which the other work on a shared machine moves far less than wall time. For the experiments that
 * compare two definitions of a function (bench/experiments/events-numbering.ts, bench/experiments/event-writer.ts).
 */
import postgres, { type Sql } from "postgres";
import { runMigrations } from "../../src/db/client";
import { cpuSeconds } from "./servers";

export interface BenchBackend {
  sql: Sql;
  /** the backend's user + system CPU time so far, in µs (10 ms steps) */
  cpuMicros(): number;
  /** closes the connection and drops the database */
  close(): Promise<void>;
}

/** BENCH_SERVER_URL: a PostgreSQL server on this machine, default postgres://postgres@127.0.0.1:5432/postgres. */
export async function openBenchBackend(prefix: string): Promise<BenchBackend> {
  const server = process.env.BENCH_SERVER_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `${prefix}_${Date.now()}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const drop = async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
  const url = new URL(server);
  url.pathname = `/${name}`;
  try {
    await runMigrations(url.toString());
    const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
    await sql`insert into accounts (id, name, plan, created_at) values ('acc_bench', 'bench', 'free', 0)`;
    await sql`set synchronous_commit = off`;
    const [{ pid }] = await sql`select pg_backend_pid() as pid`;
    return {
      sql,
      cpuMicros: () => cpuSeconds(pid) * 1e6,
      async close() {
        await sql.end();
        await drop();
      },
    };
  } catch (error) {
    await drop();
    throw error;
  }
}
