/**
 * What recording an event through kiln_record_event (one call) instead of the writer's own INSERT costs
 * the hot writers, inside PostgreSQL: a create (kiln_create, whose event is a CTE of the insert) and a
 * rename (the documents trigger, kiln_document_events). One backend runs DO blocks of N calls, each
 * committed on its own (synchronous_commit off), with the function as in src/db/sql/functions and with its
 * INSERT replaced by the call, in turn, R rounds. The figure is the backend's CPU time (/proc/<pid>/stat).
 *
 *   bun bench/experiments/event-writer.ts      (N=5000 R=8 by default; BENCH_SERVER_URL: a PostgreSQL server on this
 *                                  machine, default postgres://postgres@127.0.0.1:5432/postgres)
 */
import { readFileSync } from "node:fs";
import { openBenchBackend } from "../lib/backend";
import { median } from "../lib/report";

const N = Number(process.env.N ?? 5000);
const ROUNDS = Number(process.env.R ?? 8);
const fileOf = (name: string) => readFileSync(new URL(`../../src/db/sql/functions/${name}.sql`, import.meta.url), "utf8");

/** `text` with the part from `from` up to and including `to` replaced. */
function replaced(text: string, from: string, to: string, by: string): string {
  const start = text.indexOf(from);
  const end = text.indexOf(to, start);
  if (start < 0 || end < 0) throw new Error(`bench/experiments/event-writer.ts: '${from}' … '${to}' not found; update the variant`);
  return text.slice(0, start) + by + text.slice(end + to.length);
}

const createInline = fileOf("kiln_create");
const createCall = replaced(
  createInline,
  '  ), "event" AS (',
  'SELECT to_json("inserted") INTO "created" FROM "inserted";\n',
  `  )
  SELECT to_json("inserted") INTO "created" FROM "inserted"
    CROSS JOIN LATERAL "kiln_record_event"("p_account", 'document.created', "p_folder", NULL, "inserted", "p_updated_at");\n`,
);
const renameInline = fileOf("kiln_document_events");
const renameCall = replaced(
  renameInline,
  '  INSERT INTO "events"',
  'FROM (SELECT ("changed").*) c;\n',
  `  PERFORM "kiln_record_event"("changed"."account_id", "kind", "changed"."folder", NULL, "changed",
    (extract(epoch FROM clock_timestamp()) * 1000)::bigint);\n`,
);

const { sql, cpuMicros, close } = await openBenchBackend("kiln_event_writer");
try {
  const creates = (tag: string) => `do $$ begin for i in 1..${N} loop
    perform kiln_create('acc_bench', 100, 1, '{}'::text[], 'doc_${tag}_' || i, 'n_${tag}_' || i, null, '{}'::text[], null, 'h', 'k_${tag}_' || i, 1, '{}'::text[], '{}'::text[], '{}'::text[], false);
    commit; end loop; end $$`;
  const renames = (tag: string) => `do $$ begin for i in 1..${N} loop
    update documents set name = 'r_${tag}_' || i where id = 'doc_seed_' || i;
    commit; end loop; end $$`;
  await sql.unsafe(creates("seed"));
  for (const [writer, run, inline, call] of [
    ["a create", creates, createInline, createCall],
    ["a rename", renames, renameInline, renameCall],
  ] as const) {
    const inlined: number[] = [];
    const called: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const state of round % 2 ? ["call", "inline"] : ["inline", "call"]) {
        await sql.unsafe(state === "inline" ? inline : call).simple();
        const started = cpuMicros();
        await sql.unsafe(run(`${state}${round}`));
        (state === "inline" ? inlined : called).push((cpuMicros() - started) / N);
      }
    }
    await sql.unsafe(inline).simple();
    console.log(
      `${writer}, median of ${ROUNDS} rounds of ${N}: own INSERT ${median(inlined).toFixed(0)} µs, kiln_record_event ${median(called).toFixed(0)} µs of backend CPU`,
    );
  }
} finally {
  await close();
}
