/**
 * `bun run bench` / `bun run bench:full`: every section in one run, then one table of ratios.
 *
 *   bun bench/run.ts [--full] [--only documents,storage,utilities,engine,memory,pipelines,compression,export,patch,schemas,metrics,cluster,jobs,growth,query,events] [--readme]
 *   bun bench/run.ts --help
 *
 * `growth` (an account grown to a million documents, bench/growth.ts), `query` (queries on declared
 * indexes at 10^3 to 10^6 documents, index write cost and build rate, bench/growth-query.ts), `events` (the
 * outbox's cost, commit-to-stream and commit-to-webhook latency, 1,000 stream clients; bench/events.ts) and
 * `jobs` (a job against a client loop, a neighbour's p99 under a job; bench/jobs.ts) run only when --only
 * names them.
 *
 * Installs wrk, jq and Miller from Debian when they are missing, starts every server it measures on
 * loopback, and stops them (and drops the external database it created) at the end, also on failure.
 */
import { parseArgs } from "node:util";
import { benchCluster } from "./cluster";
import { benchCompression } from "./compression";
import { benchDocuments } from "./documents";
import { benchEvents } from "./events";
import { benchExportMemory } from "./export-memory";
import { benchGrowth } from "./growth";
import { benchQueryGrowth } from "./growth-query";
import { benchJobs } from "./jobs";
import { loadAverage, machine, notes, table, writeReadme } from "./lib/report";
import { startBare, startKiln, stopAll } from "./lib/servers";
import { ensureTool, toolVersion } from "./lib/tools";
import { benchMemory } from "./memory";
import { benchMetrics } from "./metrics";
import { benchEngineScript, benchOverheads } from "./overheads";
import { benchPatch } from "./patch";
import { benchPipelines } from "./pipelines";
import { benchSchemas } from "./schemas";
import { settingsFor } from "./settings";
import { benchStorage } from "./storage";
import { benchUtilities } from "./utilities";

const SECTIONS = [
  "documents",
  "storage",
  "utilities",
  "engine",
  "memory",
  "pipelines",
  "compression",
  "export",
  "patch",
  "schemas",
  "metrics",
  "cluster",
  "jobs",
  "growth",
  "query",
  "events",
] as const;
type Section = (typeof SECTIONS)[number];
/** what a run without --only measures */
const DEFAULT_SECTIONS = SECTIONS.filter((section) => !["growth", "query", "events", "jobs"].includes(section));

const USAGE = `bun bench/run.ts [--full] [--only <sections>] [--readme]
  --full     longer loads, more repetitions and 50 MB utility inputs (\`bun run bench:full\`)
  --only     a comma-separated list of sections: ${SECTIONS.join(",")}
             (default: all but growth, query, events and jobs, which run only when named)
  --readme   also writes the table into bench/README.md, between its results markers
Scripts run by hand, outside the suite: bench/experiments/README.md`;

const { values } = parseArgs({
  options: {
    full: { type: "boolean", default: false },
    only: { type: "string" },
    readme: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const only = new Set((values.only?.split(",") ?? DEFAULT_SECTIONS) as Section[]);
const unknown = [...only].filter((section) => !SECTIONS.includes(section));
if (unknown.length > 0) {
  // a misspelt section would otherwise measure nothing and print an empty table
  console.error(`bench: no section named ${unknown.join(", ")}\n${USAGE}`);
  process.exit(2);
}
const settings = settingsFor(values.full!);

ensureTool("wrk", "wrk");
ensureTool("jq", "jq");
ensureTool("mlr", "miller");

const startedAt = Date.now();
const loadBefore = loadAverage();
process.on("SIGINT", () => void stopAll().then(() => process.exit(130)));
/** Sections that failed: each is noted in the table and fails the run, after the others have run. */
const failed: string[] = [];
async function isolated(label: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    failed.push(label);
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    notes.push(`${label}: not measured, the section stopped: ${reason}`);
    console.error(`bench: ${label} stopped: ${error instanceof Error ? error.stack : error}`);
  }
}

try {
  if (only.has("documents")) await isolated("documents", () => benchDocuments(settings));
  if (only.has("growth")) await isolated("growth", () => benchGrowth());
  if (only.has("query")) await isolated("query", () => benchQueryGrowth());
  if (only.has("events")) await isolated("events", () => benchEvents());
  if (only.has("storage")) await isolated("storage", () => benchStorage(settings));
  if (only.has("pipelines")) {
    await isolated("pipelines", async () => {
      const kiln = await startKiln("embedded");
      await benchPipelines(settings, kiln);
      await kiln.stop();
    });
  }
  if (only.has("utilities") || only.has("engine") || only.has("memory") || only.has("compression")) {
    await isolated("utilities, engine, memory, compression", async () => {
      const kiln = await startKiln("embedded");
      const bare = await startBare(kiln);
      if (only.has("utilities")) await benchUtilities(settings, kiln, bare);
      if (only.has("engine")) await benchOverheads(settings, kiln, bare, only.has("utilities"));
      await bare.stop();
      if (only.has("memory")) await benchMemory(kiln);
      if (only.has("compression")) await benchCompression(settings, kiln);
      await kiln.stop();
    });
  }
  if (only.has("engine")) await isolated("engine (bench/engine.ts)", async () => benchEngineScript(settings));
  // 10,000 documents of 20 kB (200 MB) with --full; 2,000 (40 MB) otherwise
  if (only.has("export")) await isolated("export", () => benchExportMemory(settings.full ? 10_000 : 2_000, 20_000));
  if (only.has("patch")) await isolated("patch", () => benchPatch(settings));
  if (only.has("schemas")) await isolated("schemas", () => benchSchemas(settings));
  if (only.has("metrics")) await isolated("metrics", () => benchMetrics(settings));
  if (only.has("cluster")) await isolated("cluster", () => benchCluster(settings));
  if (only.has("jobs")) await isolated("jobs", () => benchJobs(settings));
} finally {
  await stopAll();
}

const command = values.only ? `bun bench/run.ts ${process.argv.slice(2).join(" ")}` : `bun run ${settings.full ? "bench:full" : "bench"}`;
const loadAfter = loadAverage();
const header = [
  `Measured ${new Date(startedAt).toISOString().slice(0, 16).replace("T", " ")} UTC with \`${command}\` in ${Math.round((Date.now() - startedAt) / 1000)} s`,
  // the average after includes the benchmark's own servers and load generators; only the one before says whether other work was running
  `on ${machine()}; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after, the benchmark's own load included${loadBefore >= 1 ? " (the machine was not quiet: other work was running when it started)" : ""}.`,
  `Tools: ${toolVersion(["wrk", "-v"]).replace(/ \[.*$/, "")}, ${toolVersion(["jq", "--version"])}, ${toolVersion(["mlr", "--version"])}.`,
].join("\n");
const text = [header, "", table(), ...(notes.length ? ["", ...notes.map((note) => `- ${note}`)] : [])].join("\n");
console.log(`\n${text}\n`);
if (values.readme) writeReadme(text);
// the table above says which sections stopped and why; the run still fails, so it is not taken for a complete one
if (failed.length > 0) process.exit(1);
