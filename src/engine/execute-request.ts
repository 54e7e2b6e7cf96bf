/** A whole utility request body run in one go: what a worker does with a large body it received unread. */
import { validationError } from "../core/errors";
import { OutputBudget, ResultTooLargeError } from "../utilities/budget";
import type { Utility } from "../utilities/types";
import { failingAsHttp, runSteps } from "./execution";
import { readBody, readUtilityRun } from "./run-plan";
import type { RunResult } from "./run-result";
import { runStreamed, STREAM_MIN_BYTES } from "./streaming";

/**
 * A whole utility request, read and run where it runs: the path of a large body that names no document
 * and no output (needsReadingHere said so), which the worker receives unread. A record-wise run over a
 * large array is streamed from the array's span; anything else, or anything that streaming declines,
 * parses the whole body, so answers and errors are the whole-document path's.
 */
export async function executeBytes(utility: Utility, bytes: Uint8Array, maxOutputBytes: number): Promise<RunResult> {
  const streamed = failingAsHttp(utility, () => streamedRequest(utility, bytes, maxOutputBytes));
  if (streamed) return streamed;
  const { value: plan, errors } = readUtilityRun(readBody(bytes, false), utility);
  if (errors.length > 0) throw validationError(errors);
  const [{ config, secondary }] = plan.steps;
  if (!("source" in plan.primary) || (secondary && !("source" in secondary)) || plan.output) {
    throw new Error("a request naming documents or an output must be read on the main thread");
  }
  return runSteps([{ utility, config, ...(secondary ? { secondary: secondary.source } : {}) }], plan.primary.source, false, maxOutputBytes);
}

/** The request read by member spans and its primary array streamed; undefined when that does not apply or fails. */
function streamedRequest(utility: Utility, bytes: Uint8Array, maxOutputBytes: number): RunResult | undefined {
  if (!utility.recordWise || bytes.byteLength < STREAM_MIN_BYTES) return undefined;
  try {
    const { value: plan, errors } = readUtilityRun(readBody(bytes, true), utility);
    const [{ config, secondary }] = plan.steps;
    const primary = "source" in plan.primary ? plan.primary.source : undefined;
    if (errors.length > 0 || secondary || plan.output || !primary || !("json" in primary)) return undefined;
    return runStreamed(utility, config, primary.json, new OutputBudget(maxOutputBytes));
  } catch (error) {
    if (error instanceof ResultTooLargeError) throw error;
    return undefined;
  }
}
