/**
 * What the database's backends wait for while wrk replaces 1 KB content over 50 documents of one
 * account (8 connections), on Kiln and on the bare baseline, two rounds each: pg_stat_activity sampled
 * every 3 ms, shown as active backends per sample by wait event, state and statement.
 *
 *   bun bench/experiments/lock-waits.ts [<checkout>/src/index.ts]
 */
import { writeFileSync } from "node:fs";
import postgres from "postgres";
import { dataPath, replaceBodyFile } from "../lib/data";
import { createSmallDocuments, startBare, startKiln, stopAll } from "../lib/servers";
import { ensureTool } from "../lib/tools";

ensureTool("wrk", "wrk");
const entry = process.argv[2];
try {
  const kiln = await startKiln("embedded", {}, entry);
  const bare = await startBare(kiln);
  const ids = await createSmallDocuments(kiln.url, kiln.key, (i) => `r${i}`);
  const body = replaceBodyFile("w-replace.json");
  const script = dataPath("w.lua");
  writeFileSync(
    script,
    `local p={${ids.map((id) => JSON.stringify(`/api/v1/documents/${id}/content`)).join(",")}}\nlocal i=0\nwrk.method="PUT"\nwrk.headers["Authorization"]="Bearer ${kiln.key}"\nwrk.headers["Content-Type"]="application/json"\nlocal f=io.open("${body}","rb") wrk.body=f:read("*a") f:close()\nrequest=function() i=i%#p+1 return wrk.format(nil,p[i]) end`,
  );
  const sql = postgres(kiln.databaseUrl, { max: 1, onnotice: () => {} });
  for (const round of [1, 2])
    for (const server of [kiln, bare]) {
      const counts = new Map<string, number>();
      let samples = 0;
      const proc = Bun.spawn(["wrk", "-t1", "-c8", "-d4s", "-s", script, server.url], { stdout: "pipe" });
      await Bun.sleep(500);
      const until = Date.now() + 3000;
      while (Date.now() < until) {
        const rows =
          await sql`select coalesce(wait_event_type,'cpu') || ':' || coalesce(wait_event,'-') || ':' || state as w, left(query, 40) as q from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid() and state <> 'idle'`;
        samples++;
        for (const row of rows) {
          const k = `${row.w} | ${row.q.replace(/\s+/g, " ")}`;
          counts.set(k, (counts.get(k) ?? 0) + 1);
        }
        await Bun.sleep(3);
      }
      const out = await new Response(proc.stdout).text();
      console.log(
        `== ${server.name} round ${round}: ${out.match(/Requests\/sec:\s*([\d.]+)/)?.[1]} req/s, ${samples} samples; active backends per sample:`,
      );
      for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${(v / samples).toFixed(2)}  ${k}`);
    }
  await sql.end();
} finally {
  await stopAll();
}
