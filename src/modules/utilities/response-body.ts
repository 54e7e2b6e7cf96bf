/**
 * A utility run's output: the success body a client gets, or the bytes a save writes. Output bytes from a
 * worker are never turned into a string here.
 */

import type { RunPlan } from "../../engine/run-plan";
import type { RunResult } from "../../engine/run-result";
import type { Utility } from "../../utilities/types";
import type { WrittenDocument } from "../documents/schema-guard";
import { documentView } from "../documents/service";

const encoder = new TextEncoder();

/** The run's output bytes, text or streamed chunks alike. */
export const outputBytes = (result: RunResult): Uint8Array => {
  if ("outputJson" in result) return encoder.encode(result.outputJson);
  return result.outputChunks.length === 1 ? result.outputChunks[0] : Buffer.concat(result.outputChunks);
};

const rounded = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * A run's success body: JSON text (an inline run), a Blob of the text around the output bytes (a
 * worker's run: its Content-Length is known and no 10 MB string is built or encoded here), or for a
 * streamed run the same bytes as a stream.
 */
export type ResponseBody = string | Blob | ReadableStream<Uint8Array>;

/**
 * A single run answers `{ success, output, durationMs (the utility's own), creditsUsed }`, a pipeline
 * adds `steps` and its `durationMs` is the whole run's; `document` when the output was saved. Output
 * bytes from a worker are sent between the text before and after them: one chunk as a Blob, the many
 * chunks of a streamed run as a stream that lets go of each once it is sent (a Blob would copy them all).
 */
export function responseBody(
  plan: Pick<RunPlan, "pipeline" | "output"> & { steps: { utility: Utility }[] },
  result: RunResult,
  credits: number,
  document?: WrittenDocument,
): ResponseBody {
  const after: string[] = [];
  if (plan.pipeline) {
    const steps = plan.steps.map((step, index) => ({ utility: step.utility.id, durationMs: rounded(result.stepDurationsMs[index]) }));
    after.push(`"steps":${JSON.stringify(steps)}`, `"durationMs":${rounded(result.durationMs)}`);
  } else after.push(`"durationMs":${rounded(result.stepDurationsMs[0])}`);
  after.push(`"creditsUsed":${credits}`);
  if (document) after.push(`"document":${JSON.stringify(documentView(document))}`);
  if (document?.schemaWarnings) after.push(`"warnings":${JSON.stringify(document.schemaWarnings.warnings)}`);
  const tail = `,${after.join(",")}}`;
  if (plan.output?.returnOutput === false) return `{"success":true${tail}`;
  if ("outputJson" in result) return `{"success":true,"output":${result.outputJson}${tail}`;
  if (result.outputChunks.length === 1) return new Blob([`{"success":true,"output":`, result.outputChunks[0], tail]);
  return streamOf([`{"success":true,"output":`, ...result.outputChunks, tail]);
}

/**
 * The Kiln-Schema-Warnings header of a run whose saved output its folder's schema (mode warn) warned
 * about: `onSchemaWarnings` goes with the run, `headers()` with its response.
 */
export function schemaWarningsHeader() {
  let count: number | undefined;
  return {
    onSchemaWarnings: (warnings: number) => {
      count = warnings;
    },
    headers: (): Record<string, string> => (count === undefined ? {} : { "Kiln-Schema-Warnings": String(count) }),
  };
}

/** The parts in order, letting go of each once it is sent. */
function streamOf(parts: (string | Uint8Array | undefined)[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      const part = parts[next];
      if (part === undefined) return controller.close();
      parts[next++] = undefined;
      controller.enqueue(typeof part === "string" ? encoder.encode(part) : part);
    },
  });
}
