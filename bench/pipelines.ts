/**
 * Section "pipelines": what one worker hop and reading inputs from the content store buy.
 *
 * - A 3-step pipeline (csv-to-json → filter → pick-fields) on a 10 MB CSV, against each of its steps
 *   run alone over HTTP on that step's own input: target ≤ 1.3× the slowest step alone (the input is
 *   parsed once, the steps work on the in-memory value, the result is serialised once).
 * - A run on a stored 10 MB document (primaryDocumentId) against the same run with the content posted
 *   inline: target ≤ 1.1× (the bytes go from the content store to the worker, not through the client).
 *
 * Every measurement alternates A and B in the same loop (the machine is shared), medians compared.
 */

import { csvOfSize, MB, recordsOfSize } from "./lib/data";
import { median, ms, notes, rows, times } from "./lib/report";
import { api, type KilnServer } from "./lib/servers";
import type { Settings } from "./settings";

async function post(kiln: KilnServer, path: string, text: string): Promise<string> {
  const response = await fetch(kiln.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/json", "accept-encoding": "identity" },
    body: text,
  });
  const answer = await response.text();
  if (response.status !== 200) throw new Error(`${path}: Kiln answered ${response.status} ${answer.slice(0, 300)}`);
  return answer;
}

/** Each request timed `repetitions` times after a warm-up, the requests interleaved; the medians. */
async function interleaved(repetitions: number, requests: (() => Promise<unknown>)[]): Promise<number[]> {
  for (const request of requests) await request();
  const durations = requests.map(() => [] as number[]);
  for (let round = 0; round < repetitions; round++) {
    for (const [index, request] of requests.entries()) {
      const started = performance.now();
      await request();
      durations[index].push(performance.now() - started);
    }
  }
  return durations.map(median);
}

const STEPS = [
  { utility: "convert.csv-to-json" },
  { utility: "generate.filter", config: { condition: "score >= 10" } },
  { utility: "structure.pick-fields", config: { paths: ["id", "name", "city", "score"] } },
];

export async function benchPipelines(settings: Settings, kiln: KilnServer): Promise<void> {
  // more rounds than the utilities section: each ratio compares medians of runs that share a loaded machine
  const repetitions = Math.max(7, 2 * settings.repetitions(10 * MB));

  // 1. one hop: the pipeline against each step alone, each on the input it sees inside the pipeline
  const csv = csvOfSize(10 * MB);
  const pipelineText = JSON.stringify({ steps: STEPS, inputs: { primary: csv } });
  const aloneTexts: string[] = [];
  let primary: unknown = csv;
  for (const step of STEPS) {
    const text = JSON.stringify({ inputs: { primary }, config: step.config ?? {} });
    aloneTexts.push(text);
    primary = JSON.parse(await post(kiln, `/api/v1/utilities/${step.utility}`, text)).output;
  }
  const piped = JSON.parse(await post(kiln, "/api/v1/pipelines/run", pipelineText));
  if (JSON.stringify(piped.output) !== JSON.stringify(primary))
    throw new Error("pipelines: the pipeline's output differs from its steps run one by one");
  const [pipelineMs, ...aloneMs] = await interleaved(repetitions, [
    () => post(kiln, "/api/v1/pipelines/run", pipelineText),
    ...STEPS.map((step, index) => () => post(kiln, `/api/v1/utilities/${step.utility}`, aloneTexts[index])),
  ]);
  const slowest = Math.max(...aloneMs);
  const slowestStep = STEPS[aloneMs.indexOf(slowest)].utility;
  const hopRatio = pipelineMs / slowest;
  rows.push({
    section: "pipelines",
    case: "3 steps on 10 MB CSV (csv-to-json → filter → pick-fields)",
    kiln: ms(pipelineMs),
    reference: `slowest step alone (${slowestStep}): ${ms(slowest)} · steps alone: ${aloneMs.map(ms).join(" + ")}`,
    ratio: `${times(hopRatio)} slowest step`,
    target: "≤ 1.3×",
    met: hopRatio <= 1.3,
  });
  console.error(`bench: pipeline ${ms(pipelineMs)}, steps alone ${aloneMs.map(ms).join(", ")}: ${times(hopRatio)} the slowest`);

  // 2. stored input: primaryDocumentId against the same content posted inline
  const records = recordsOfSize(10 * MB);
  const config = { paths: ["id", "name", "address.city"] };
  const { document } = await api(kiln.url, kiln.key, "POST", "/api/v1/documents", { name: "bench-10mb.json", content: records });
  const storedText = JSON.stringify({ inputs: { primaryDocumentId: document.id }, config });
  const inlineText = JSON.stringify({ inputs: { primary: records }, config });
  if (
    (await post(kiln, "/api/v1/utilities/structure.pick-fields", storedText).then((text) => JSON.parse(text).output.length)) !==
    records.length
  ) {
    throw new Error("pipelines: the stored run's output is not the inline run's");
  }
  const [storedMs, inlineMs] = await interleaved(repetitions, [
    () => post(kiln, "/api/v1/utilities/structure.pick-fields", storedText),
    () => post(kiln, "/api/v1/utilities/structure.pick-fields", inlineText),
  ]);
  const storedRatio = storedMs / inlineMs;
  rows.push({
    section: "pipelines",
    case: "pick-fields on a stored 10 MB document",
    kiln: ms(storedMs),
    reference: `content posted inline: ${ms(inlineMs)}`,
    ratio: `${times(storedRatio)} inline`,
    target: "≤ 1.1×",
    met: storedRatio <= 1.1,
  });
  notes.push(`pipelines: medians of ${repetitions} interleaved runs each; the documents' 10 MB content was stored once before timing`);
  console.error(`bench: stored ${ms(storedMs)}, inline ${ms(inlineMs)}: ${times(storedRatio)}`);
}
