/**
 * What numbering an account's events at their commit (migration 0020: the deferred events_number
 * trigger, one counter increment and one event_commits row per transaction and account) costs a create,
 * inside PostgreSQL: one backend runs DO blocks of N creates (kiln_create, each committed on its own,
 * synchronous_commit off so that the WAL flush hides nothing), with the trigger enabled and disabled in
 * turn, R rounds. The figure is the backend's CPU time (/proc/<pid>/stat), which the other work on a
 * shared machine moves far less than wall time; the events themselves are written in both states.
 *
 *   bun bench/experiments/events-numbering.ts      (N=5000 R=8 by default; BENCH_SERVER_URL: a PostgreSQL server
 *                                      on this machine, default postgres://postgres@127.0.0.1:5432/postgres)
 */
import { readFileSync } from "node:fs";
import postgres from "postgres";
import { runMigrations } from "../../src/db/client";

const SERVER = process.env.BENCH_SERVER_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const N = Number(process.env.N ?? 5000);
const ROUNDS = Number(process.env.R ?? 8);

const name = `kiln_numbering_${Date.now()}`;
const admin = postgres(SERVER, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = new URL(SERVER);
url.pathname = `/${name}`;
try {
  await runMigrations(url.toString());
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  await sql`insert into accounts (id, name, plan, created_at) values ('acc_bench', 'bench', 'free', 0)`;
  await sql`set synchronous_commit = off`;
  const [{ pid }] = await sql`select pg_backend_pid() as pid`;
  // user + system time in clock ticks (100 a second), fields 14 and 15 of /proc/<pid>/stat
  const cpuMicros = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  };
  const creates = (tag: string) => `do $$ begin for i in 1..${N} loop
    perform kiln_create('acc_bench', 100, 1, '{}'::text[], 'doc_${tag}_' || i, 'n_${tag}_' || i, null, '{}'::text[], null, 'h', 'k_${tag}_' || i, 1);
    commit; end loop; end $$`;
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const state of round % 2 ? ["off", "on"] : ["on", "off"]) {
      await sql.unsafe(`alter table events ${state === "on" ? "enable" : "disable"} trigger events_number`);
      const started = cpuMicros();
      await sql.unsafe(creates(`${state}${round}`));
      (state === "on" ? on : off).push((cpuMicros() - started) / N);
    }
    console.log(
      `round ${round + 1}: numbered ${on.at(-1)!.toFixed(0)} µs, not numbered ${off.at(-1)!.toFixed(0)} µs of backend CPU a create`,
    );
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(
    `median of ${ROUNDS} rounds of ${N}: numbered ${median(on).toFixed(0)} µs, not numbered ${median(off).toFixed(0)} µs: +${(median(on) - median(off)).toFixed(0)} µs a create`,
  );
  await sql.end();
} finally {
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
}
