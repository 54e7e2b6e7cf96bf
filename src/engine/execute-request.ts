/** A whole utility request body run in one go: what a worker does with a large body it received unread. */
import { isUtf8 } from "node:buffer";
import { validationError } from "../core/errors";
import { exceedsDepth, parseJsonBytes } from "../core/json/parse";
import { CLOSE_BRACE, COLON, COMMA, skipWhitespace } from "../core/json/scan";
import { skipJsonValue } from "../core/json/strict-scan";
import { ResultTooLargeError } from "../utilities/budget";
import type { Utility } from "../utilities/types";
import { failingAsHttp, runSteps, runUnparsed, runUtilityOnText } from "./execution";
import { readBody, readUtilityRun } from "./run-plan";
import type { RunResult } from "./run-result";
import { STREAM_MIN_BYTES } from "./streaming";

/**
 * A whole utility request, read and run where it runs: the path of a large body that names no document
 * and no output (needsReadingHere said so), which the worker receives unread. A utility with a path over
 * its input's text runs on the primary input's span, and a record-wise run over a large array is
 * streamed from it; anything else, or anything those paths decline, parses the whole body, so answers
 * and errors are the whole-document path's.
 */
export async function executeBytes(utility: Utility, bytes: Uint8Array, maxOutputBytes: number): Promise<RunResult> {
  const fromSpan = failingAsHttp(utility, () => runOnPrimarySpan(utility, bytes, maxOutputBytes));
  if (fromSpan) return fromSpan;
  const { value: plan, errors } = readUtilityRun(readBody(bytes, false), utility);
  if (errors.length > 0) throw validationError(errors);
  const [{ config, secondary }] = plan.steps;
  if (!("source" in plan.primary) || (secondary && !("source" in secondary)) || plan.output) {
    throw new Error("a request naming documents or an output must be read on the main thread");
  }
  return runSteps([{ utility, config, ...(secondary ? { secondary: secondary.source } : {}) }], plan.primary.source, false, maxOutputBytes);
}

const OPENING = ["{", '"inputs"', ":", "{", '"primary"', ":"].map((token) => Buffer.from(token));
const CONFIG_KEY = Buffer.from('"config"');

/** After `at` and any whitespace, `token`: the index just past it, else -1. */
function expectToken(bytes: Uint8Array, at: number, token: Uint8Array): number {
  const start = skipWhitespace(bytes, at);
  for (let k = 0; k < token.length; k++) if (bytes[start + k] !== token[k]) return -1;
  return start + token.length;
}

/**
 * A body of the usual shape, `{"inputs":{"primary":P},"config":C}` (any whitespace between tokens), run
 * on P's text with one pass over it, where reading the body by member spans first costs a second pass.
 * C comes after P, so it is found from the end: the last `"config"`, its value checked and the rest of
 * the body `}`. Once P is read from its start, the text between P's end and that key must be `},` and
 * nothing else, which proves the guess: a `"config"` inside C or P, or any other shape, is declined, and
 * the caller reads the body by member spans. `bytes`: valid UTF-8, not too deep.
 */
function runOnUsualBody(utility: Utility, bytes: Uint8Array, maxOutputBytes: number): RunResult | undefined {
  let at = 0;
  for (const token of OPENING) if ((at = expectToken(bytes, at, token)) < 0) return undefined;
  const primaryStart = skipWhitespace(bytes, at);
  const configKey = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).lastIndexOf(CONFIG_KEY);
  if (configKey <= primaryStart) return undefined;
  const colon = skipWhitespace(bytes, configKey + CONFIG_KEY.length);
  if (bytes[colon] !== COLON) return undefined;
  const configStart = skipWhitespace(bytes, colon + 1);
  const configEnd = skipJsonValue(bytes, configStart);
  if (configEnd < 0) return undefined;
  const close = skipWhitespace(bytes, configEnd);
  if (bytes[close] !== CLOSE_BRACE || skipWhitespace(bytes, close + 1) !== bytes.length) return undefined;
  const config = parseJsonBytes(bytes.subarray(configStart, configEnd));
  if (!config.ok) return undefined;
  const { value: plan, errors } = readUtilityRun({ inputs: { primary: null }, config: config.value }, utility);
  if (errors.length > 0) return undefined;
  const answer = runUtilityOnText({ utility, config: plan.steps[0].config }, bytes, primaryStart, maxOutputBytes);
  if (!answer) return undefined;
  const inputsEnd = skipWhitespace(bytes, answer.end);
  if (bytes[inputsEnd] !== CLOSE_BRACE) return undefined;
  const comma = skipWhitespace(bytes, inputsEnd + 1);
  return bytes[comma] === COMMA && skipWhitespace(bytes, comma + 1) === configKey ? answer.result : undefined;
}

/**
 * The request read by member spans and its primary input run on its text (runOnText) or streamed;
 * undefined when neither applies or both decline. A body nested deeper than JSON.parse's path accepts
 * takes that path, which refuses it as a whole (its primary alone may be shallow enough).
 */
function runOnPrimarySpan(utility: Utility, bytes: Uint8Array, maxOutputBytes: number): RunResult | undefined {
  const streams = utility.recordWise !== undefined && bytes.byteLength >= STREAM_MIN_BYTES;
  if ((!utility.runOnText && !streams) || exceedsDepth(bytes)) return undefined;
  try {
    const usual = utility.runOnText && isUtf8(bytes) ? runOnUsualBody(utility, bytes, maxOutputBytes) : undefined;
    if (usual) return usual;
    const { value: plan, errors } = readUtilityRun(readBody(bytes, true), utility);
    const [{ config, secondary }] = plan.steps;
    const primary = "source" in plan.primary ? plan.primary.source : undefined;
    if (errors.length > 0 || secondary || plan.output || !primary || !("json" in primary)) return undefined;
    return runUnparsed({ utility, config }, primary.json, maxOutputBytes);
  } catch (error) {
    if (error instanceof ResultTooLargeError) throw error;
    return undefined;
  }
}
