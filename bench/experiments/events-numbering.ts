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
import { openBenchBackend } from "../lib/backend";
import { median } from "../lib/report";

const N = Number(process.env.N ?? 5000);
const ROUNDS = Number(process.env.R ?? 8);

const { sql, cpuMicros, close } = await openBenchBackend("kiln_numbering");
try {
  const creates = (tag: string) => `do $$ begin for i in 1..${N} loop
    perform kiln_create('acc_bench', 100, 1, '{}'::text[], 'doc_${tag}_' || i, 'n_${tag}_' || i, null, '{}'::text[], null, 'h', 'k_${tag}_' || i, 1, '{}'::text[], '{}'::text[], '{}'::text[], false);
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
  console.log(
    `median of ${ROUNDS} rounds of ${N}: numbered ${median(on).toFixed(0)} µs, not numbered ${median(off).toFixed(0)} µs: +${(median(on) - median(off)).toFixed(0)} µs a create`,
  );
} finally {
  await close();
}
