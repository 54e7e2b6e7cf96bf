/**
 * A/B of two versions of Kiln in one sitting: the code of another checkout ("before", e.g. a
 * `git archive` of the previous commit with node_modules linked in) against this tree ("after").
 * Each version gets its own Kiln and its own bare baseline (from the same checkout) over that Kiln's database; every round runs
 * before-bare, before-Kiln, after-Kiln, after-bare (reversed on odd rounds), so load from other work
 * on the machine falls on both sides alike. Prints each round's ratios, their median, the load, and
 * the CPU time Kiln's process spent per request (user + system, from /proc: far less sensitive to the
 * load than the rates).
 *
 *   bun bench/ab.ts --before <checkout> [--mode embedded|external] [--cases get,list,create,replace,replace-one,download,engine,utilities]
 *                   [--rounds 4] [--seconds 3] [--utilities pick-fields,find-replace,…] [--requests 15]
 *
 * `utilities`: 10 MB runs of the utilities of bench/utilities.ts (the issue 12 targets), one request at
 * a time from this process as bench/utilities.ts sends them. A 10 MB run takes 0.1–0.5 s, so wrk's few
 * requests per round would give noise; instead each of `--requests` rounds sends one request to each of
 * the four servers (before-bare, before-Kiln, after-Kiln, after-bare, rotated every round), and the
 * figures are the medians of the per-round ratios (Kiln ÷ its own bare) and of the CPU time per request.
 * A utility with a peer (jq, Miller) has the peer timed every third round, and each side's Kiln
 * compared with it.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createBodyFile, dataPath, documentText, KB, MB, recordsOfSize, replaceBodyFile } from "./lib/data";
import { loadAverage, median } from "./lib/report";
import { api, cpuSeconds, type KilnServer, type Server, startKiln, startProcess, stopAll } from "./lib/servers";
import { ensureTool } from "./lib/tools";
import { type LoadSpec, load } from "./lib/wrk";
import { kilnRun, peerFiles, peerRun, CASES as UTILITY_CASES } from "./utilities";

const { values } = parseArgs({
  options: {
    before: { type: "string" },
    mode: { type: "string", default: "embedded" },
    cases: { type: "string", default: "get,list,create,replace,replace-one,download,engine" },
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "3" },
    utilities: { type: "string", default: UTILITY_CASES.map((utilityCase) => utilityCase.label).join(",") },
    requests: { type: "string", default: "15" },
  },
});
if (!values.before) throw new Error("--before <checkout> is required");
ensureTool("wrk", "wrk");
const mode = values.mode as "embedded" | "external";
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const wanted = new Set(values.cases!.split(","));

interface Side {
  label: string;
  kiln: KilnServer;
  bare: Server;
  ids: { small: string[]; replaceable: string[]; one: string; oneMb: string };
}

async function seed(kiln: KilnServer): Promise<Side["ids"]> {
  const content = recordsOfSize(1 * KB);
  const create = async (name: string) =>
    (await api(kiln.url, kiln.key, "POST", "/api/v1/documents", { name, content })).document.id as string;
  const small: string[] = [];
  for (let i = 0; i < 50; i++) small.push(await create(`bench-${i}`));
  const replaceable: string[] = [];
  for (let i = 0; i < 50; i++) replaceable.push(await create(`replace-${i}`));
  const one = await create("replace-one");
  const oneMb = await create("one-mb");
  await fetch(`${kiln.url}/api/v1/documents/${oneMb}/content`, {
    method: "PUT",
    headers: { authorization: `Bearer ${kiln.key}` },
    body: documentText(1 * MB),
  });
  return { small, replaceable, one, oneMb };
}

/** A Kiln of one checkout and that checkout's own bare baseline over the same database. */
async function side(label: string, checkout: string): Promise<Side> {
  const kiln = await startKiln(mode, {}, resolve(checkout, "src/index.ts"));
  const bare = await startProcess("bare", resolve(checkout, "bench/baseline/server.ts"), {
    DATABASE_URL: kiln.databaseUrl,
    CONTENT_DIR: join(kiln.dataDir, "content"),
  });
  return { label, kiln, bare, ids: await seed(kiln) };
}

function findReplaceBody(bytes: number): string {
  const path = dataPath(`ab-find-replace-${bytes}.json`);
  const config = { search: "alpha", replacement: "omega" };
  const wrapper = JSON.stringify({ inputs: { primary: [] }, config }).length;
  writeFileSync(path, JSON.stringify({ inputs: { primary: recordsOfSize(bytes - wrapper) }, config }));
  return path;
}

type Spec = Omit<LoadSpec, "base" | "key" | "seconds">;
interface Case {
  name: string;
  spec(ids: Side["ids"]): Spec;
  metric: "rps" | "p50";
}

const documents = "/api/v1/documents";
const createBody = createBodyFile("ab-create-1kb.json");
const replaceBody = replaceBodyFile("ab-replace-1kb.json");
const utility = "/api/v1/utilities/structure.find-replace";

const CASES: Record<string, Case[]> = {
  get: [
    {
      name: "get metadata",
      metric: "rps",
      spec: (ids) => ({ method: "GET", paths: ids.small.map((id) => `${documents}/${id}`), connections: 8 }),
    },
  ],
  list: [{ name: "list a page of 50", metric: "rps", spec: () => ({ method: "GET", paths: [`${documents}?limit=50`], connections: 8 }) }],
  create: [
    { name: "create 1 KB", metric: "rps", spec: () => ({ method: "POST", paths: [documents], bodyFile: createBody, connections: 8 }) },
  ],
  replace: [
    {
      name: "replace 1 KB, 50 documents",
      metric: "rps",
      spec: (ids) => ({
        method: "PUT",
        paths: ids.replaceable.map((id) => `${documents}/${id}/content`),
        bodyFile: replaceBody,
        connections: 8,
      }),
    },
  ],
  "replace-one": [
    {
      name: "replace 1 KB, one document",
      metric: "rps",
      spec: (ids) => ({ method: "PUT", paths: [`${documents}/${ids.one}/content`], bodyFile: replaceBody, connections: 8 }),
    },
  ],
  download: [
    {
      name: "download 1 MB",
      metric: "rps",
      spec: (ids) => ({ method: "GET", paths: [`${documents}/${ids.oneMb}/content`], connections: 4 }),
    },
  ],
  engine: [
    {
      name: "1 KB run p50 (inline)",
      metric: "p50",
      spec: () => ({ method: "POST", paths: [utility], bodyFile: findReplaceBody(1 * KB), connections: 1 }),
    },
    {
      name: "4 KB run p50 (worker)",
      metric: "p50",
      spec: () => ({ method: "POST", paths: [utility], bodyFile: findReplaceBody(4 * KB), connections: 1 }),
    },
  ],
};

const cpuPerRequest = new Map<Server, number[]>();

function measure(server: Server, key: string, spec: Spec, metric: Case["metric"]): number {
  const cpuBefore = cpuSeconds(server.pid);
  const result = load({ ...spec, base: server.url, key, seconds });
  if (result.errors > 0) throw new Error(`${server.name}: ${result.errors} failed of ${result.requests}`);
  cpuPerRequest.get(server)?.push(((cpuSeconds(server.pid) - cpuBefore) / result.requests) * 1e6);
  return metric === "rps" ? result.rps : result.p50Ms;
}

const figure = (metric: Case["metric"], kiln: number, bare: number) => (metric === "rps" ? kiln / bare : kiln - bare);
const show = (metric: Case["metric"], value: number) => (metric === "rps" ? `${value.toFixed(2)}×` : `+${value.toFixed(2)} ms`);

/** 10 MB utility runs, one request per server per round (see the head comment). */
async function utilitiesAB(before: Side, after: Side): Promise<void> {
  const requests = Number(values.requests);
  for (const label of values.utilities!.split(",")) {
    const found = UTILITY_CASES.find((candidate) => candidate.label === label);
    if (!found) throw new Error(`no utility case '${label}' in bench/utilities.ts`);
    const body = found.body(10 * MB);
    const text = JSON.stringify(body);
    const files = found.peer && peerFiles(found, body, 10 * MB);
    const time = async (s: Side, server: Server) => {
      const cpuBefore = cpuSeconds(server.pid);
      const started = performance.now();
      await kilnRun(s.kiln, found.utilityId, text, server);
      const elapsed = performance.now() - started;
      return { ms: elapsed, cpuMs: (cpuSeconds(server.pid) - cpuBefore) * 1000 };
    };
    // the outputs must agree before anything is timed; one warm-up each
    const outputs = await Promise.all([before, after].map(async (s) => JSON.parse(await kilnRun(s.kiln, found.utilityId, text)).output));
    if (JSON.stringify(outputs[0]) !== JSON.stringify(outputs[1])) throw new Error(`${label}: before and after give different outputs`);
    for (const s of [before, after]) await kilnRun(s.kiln, found.utilityId, text, s.bare);
    const ratios: Record<string, number[]> = { before: [], after: [] };
    const ms: Record<string, { kiln: number[]; bare: number[]; kilnCpu: number[]; bareCpu: number[] }> = {
      before: { kiln: [], bare: [], kilnCpu: [], bareCpu: [] },
      after: { kiln: [], bare: [], kilnCpu: [], bareCpu: [] },
    };
    const peerMs: number[] = [];
    const loads: number[] = [];
    for (let round = 0; round < requests; round++) {
      loads.push(loadAverage());
      const order = round % 2 === 0 ? [before, after] : [after, before];
      for (const [index, s] of order.entries()) {
        const servers = index === 0 ? [s.bare, s.kiln] : [s.kiln, s.bare];
        const [first, second] = [await time(s, servers[0]), await time(s, servers[1])];
        const [bare, kiln] = index === 0 ? [first, second] : [second, first];
        ratios[s.label].push(kiln.ms / bare.ms);
        ms[s.label].kiln.push(kiln.ms);
        ms[s.label].bare.push(bare.ms);
        ms[s.label].kilnCpu.push(kiln.cpuMs);
        ms[s.label].bareCpu.push(bare.cpuMs);
      }
      if (files && round % 3 === 1) {
        const started = performance.now();
        peerRun(found.peer!, files);
        peerMs.push(performance.now() - started);
      }
    }
    const m = (list: number[]) => median(list).toFixed(0);
    console.log(`${label} 10 MB, ${requests} requests each, load ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`);
    for (const s of ["before", "after"]) {
      const x = ms[s];
      const sorted = [...ratios[s]].sort((a, b) => a - b);
      const peer =
        peerMs.length === 0
          ? ""
          : `; ${found.peer!.tool} ${m(peerMs)} ms ÷ Kiln = ${(median(peerMs) / median(x.kiln)).toFixed(1)}× (slowest Kiln run ${(median(peerMs) / Math.max(...x.kiln)).toFixed(1)}×)`;
      console.log(
        `  ${s.padEnd(6)} Kiln ÷ bare ${median(ratios[s]).toFixed(2)}× (quartiles ${sorted[Math.floor(sorted.length / 4)].toFixed(2)}–${sorted[Math.floor((sorted.length * 3) / 4)].toFixed(2)}); Kiln ${m(x.kiln)} ms, bare ${m(x.bare)} ms; CPU per request Kiln ${m(x.kilnCpu)} ms, bare ${m(x.bareCpu)} ms${peer}`,
      );
    }
  }
}

try {
  const before = await side("before", values.before);
  const after = await side("after", resolve(import.meta.dir, ".."));
  console.log(`A/B ${mode} PG, ${rounds} rounds of ${seconds} s; before = ${values.before}`);
  if (wanted.has("utilities")) await utilitiesAB(before, after);
  for (const name of Object.keys(CASES).filter((name) => wanted.has(name))) {
    for (const testCase of CASES[name]) {
      const specs = new Map([before, after].map((s) => [s, testCase.spec(s.ids)]));
      for (const s of [before, after])
        for (const server of [s.bare, s.kiln]) load({ ...specs.get(s)!, base: server.url, key: s.kiln.key, seconds: 1 });
      const ratios: Record<string, number[]> = { before: [], after: [] };
      for (const s of [before, after]) for (const server of [s.kiln, s.bare]) cpuPerRequest.set(server, []);
      const loads: number[] = [];
      for (let round = 0; round < rounds; round++) {
        loads.push(loadAverage());
        const order = round % 2 === 0 ? [before, after] : [after, before];
        const raw = new Map<Side, { kiln: number; bare: number }>();
        for (const [index, s] of order.entries()) {
          const servers = index === 0 ? [s.bare, s.kiln] : [s.kiln, s.bare];
          const measured = servers.map((server) => measure(server, s.kiln.key, specs.get(s)!, testCase.metric));
          raw.set(s, index === 0 ? { bare: measured[0], kiln: measured[1] } : { kiln: measured[0], bare: measured[1] });
        }
        for (const s of [before, after]) ratios[s.label].push(figure(testCase.metric, raw.get(s)!.kiln, raw.get(s)!.bare));
        const detail = [before, after]
          .map(
            (s) =>
              `${s.label} ${raw.get(s)!.kiln.toFixed(testCase.metric === "rps" ? 0 : 2)}/${raw.get(s)!.bare.toFixed(testCase.metric === "rps" ? 0 : 2)}`,
          )
          .join(", ");
        console.log(
          `  ${testCase.name} round ${round + 1} (load ${loads.at(-1)!.toFixed(2)}): ${detail} (Kiln/bare${testCase.metric === "rps" ? " req/s" : " p50 ms"})`,
        );
      }
      console.log(
        `${testCase.name}: before ${show(testCase.metric, median(ratios.before))} [${ratios.before.map((r) => show(testCase.metric, r)).join(" ")}]  after ${show(testCase.metric, median(ratios.after))} [${ratios.after.map((r) => show(testCase.metric, r)).join(" ")}]  load ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`,
      );
      const cpu = (server: Server) => median(cpuPerRequest.get(server)!);
      console.log(
        `${testCase.name}: CPU per request (median, Kiln / bare): before ${cpu(before.kiln).toFixed(0)} / ${cpu(before.bare).toFixed(0)} µs, after ${cpu(after.kiln).toFixed(0)} / ${cpu(after.bare).toFixed(0)} µs`,
      );
    }
  }
} finally {
  await stopAll();
}
