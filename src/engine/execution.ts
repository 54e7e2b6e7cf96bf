/**
 * The one engine: utility runs from their inputs to the output JSON text. A run is a list of steps
 * (a single utility run is a pipeline of one step) applied to one in-memory value: each input is parsed
 * once (depth-checked), every step works on the previous step's value, and the result is serialised
 * once. Pure, with no database or HTTP server: the main thread runs it inline for small inputs and the
 * worker threads run the very same code for large ones, so both give the same answer.
 */

import { isUtf8 } from "node:buffer";
import type { TObject, TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { ERRORS } from "../core/error-codes";
import { type FieldError, HttpError, httpError, validationError } from "../core/errors";
import { exceedsDepth, parseJsonBytes } from "../core/json/parse";
import { skipWhitespace } from "../core/json/scan";
import { OutputBudget, ResultTooLargeError, type WorkBudget, WorkBudgetExceededError } from "../utilities/budget";
import { ExpressionTooLargeError } from "../utilities/shared/expressions";
import { type Utility, UtilityConfigError, UtilityError, type UtilityInputs } from "../utilities/types";
import type { RunResult, Source } from "./run-result";
import { runStreamed } from "./streaming";

export interface Step {
  utility: Utility;
  /** validated, defaults filled */
  config: Record<string, unknown>;
  secondary?: Source;
}

/**
 * Runs the steps in order, each on the previous one's output. `nameSteps` (pipelines): errors name the
 * failing step by its index, `/steps/<i>`. A single step over JSON text with no secondary input may run
 * on the text itself (its utility's runOnText) or be streamed record by record; whatever those decline
 * runs here as usual. Each step builds within
 * `maxOutputBytes`: a utility whose output can outgrow its input charges everything it adds to it as it
 * builds it (utilities/budget.ts), values it shares by reference included, to one budget for all the
 * steps, so the output is at most the input plus the limit before the serialised output is checked.
 * `work` (an inline run's): one work budget for all the steps, checked inside them and between them;
 * past it the run throws WorkBudgetExceededError as it is, for the caller to run it elsewhere.
 */
export async function runSteps(
  steps: readonly Step[],
  primary: Source,
  nameSteps: boolean,
  maxOutputBytes: number,
  work?: WorkBudget,
): Promise<RunResult> {
  const [only] = steps;
  const unparsed =
    steps.length === 1 && only.secondary === undefined && "json" in primary
      ? failingAsHttp(only.utility, () => runUnparsed(only, primary.json, maxOutputBytes))
      : undefined;
  if (unparsed) return unparsed;
  const started = performance.now();
  let value = readSource(primary);
  const stepDurationsMs: number[] = [];
  const budget = new OutputBudget(maxOutputBytes, work);
  for (const [index, step] of steps.entries()) {
    const inputs: UtilityInputs =
      step.secondary === undefined ? { primary: value } : { primary: value, secondary: readSource(step.secondary) };
    const stepStarted = performance.now();
    try {
      work?.check();
      value = await step.utility.run(inputs, step.config, budget);
    } catch (error) {
      if (error instanceof WorkBudgetExceededError) throw error;
      throw stepFailure(runFailure(step.utility, error), nameSteps ? index : undefined, step.utility);
    }
    stepDurationsMs.push(performance.now() - stepStarted);
  }
  let outputJson: string | undefined;
  const last = steps.length - 1;
  try {
    outputJson = JSON.stringify(value);
    if (outputJson !== undefined && outputJson.length > maxOutputBytes) throw new ResultTooLargeError(maxOutputBytes);
  } catch (error) {
    throw stepFailure(runFailure(steps[last].utility, error), nameSteps ? last : undefined, steps[last].utility);
  }
  return { outputJson: outputJson ?? "null", durationMs: performance.now() - started, stepDurationsMs };
}

/**
 * One step over JSON text without parsing it whole: on the text itself (runOnText), else streamed record
 * by record; undefined when both decline. Throws only ResultTooLargeError, as streaming does.
 */
export function runUnparsed(step: Step, json: Uint8Array, maxOutputBytes: number): RunResult | undefined {
  return runOnText(step, json, maxOutputBytes) ?? runStreamed(step.utility, step.config, json, new OutputBudget(maxOutputBytes));
}

/**
 * The step's own path over the input's text, where its utility has one and it answers. Whatever it
 * declines or throws, and an output over the limit, is left to the usual path, which gives the usual
 * answer or error. An output of at most `maxOutputBytes` bytes is within the limit the usual path
 * checks, which counts the output text's UTF-16 units (never more than its UTF-8 bytes).
 */
export function runOnText(step: Step, json: Uint8Array, maxOutputBytes: number): RunResult | undefined {
  if (!step.utility.runOnText) return undefined;
  const started = performance.now();
  if (!isUtf8(json) || exceedsDepth(json)) return undefined;
  // the decoder of the usual path (parseJsonBytes) drops a leading byte order mark
  const bom = json[0] === 0xef && json[1] === 0xbb && json[2] === 0xbf;
  const answer = runUtilityOnText(step, json, skipWhitespace(json, bom ? 3 : 0), maxOutputBytes, started);
  return answer && skipWhitespace(json, answer.end) === json.length ? answer.result : undefined;
}

/**
 * Utility.runOnText on the value at `start` of `text` (checked by the caller), as a run's result with
 * where the value ends; undefined when it declines, throws, or gives more than `maxOutputBytes`.
 */
export function runUtilityOnText(
  step: Step,
  text: Uint8Array,
  start: number,
  maxOutputBytes: number,
  started = performance.now(),
): { result: RunResult; end: number } | undefined {
  let answer: { output: Uint8Array; end: number } | undefined;
  try {
    answer = step.utility.runOnText?.(step.config, text, start);
  } catch {
    return undefined;
  }
  if (answer === undefined || answer.output.byteLength > maxOutputBytes) return undefined;
  const durationMs = performance.now() - started;
  return { result: { outputChunks: [answer.output], durationMs, stepDurationsMs: [durationMs] }, end: answer.end };
}

/** `work`, with whatever it throws answered as a failure of `utility` (413, 400, …). */
export function failingAsHttp<T>(utility: Utility, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw runFailure(utility, error);
  }
}

function readSource(source: Source): unknown {
  if ("value" in source) return source.value;
  const parsed = parseJsonBytes(source.json);
  if (!parsed.ok) throw httpError(ERRORS.malformed_json, parsed.message);
  return parsed.value;
}

/** A failure inside a pipeline names its step: config paths move under `/steps/<i>`, the detail says which. */
function stepFailure(error: HttpError, index: number | undefined, utility: Utility): HttpError {
  if (index === undefined) return error;
  const at = `/steps/${index}`;
  const errors = error.extra.errors?.map((field) => ({ path: `${at}${field.path}`, message: field.message })) ?? [
    { path: at, message: error.message },
  ];
  return new HttpError(error.status, error.code, `${at} (${utility.id}) failed: ${error.message}`, { ...error.extra, errors });
}

const compiled = new WeakMap<TObject, TypeCheck<TObject>>();

function checkerFor(schema: TObject): TypeCheck<TObject> {
  let checker = compiled.get(schema);
  if (!checker) {
    checker = TypeCompiler.Compile(schema);
    compiled.set(schema, checker);
  }
  return checker;
}

/** The config with defaults filled in, or 400 naming every offending field under `/config`. */
export function validateConfig(utility: Utility, config: Record<string, unknown>): Record<string, unknown> {
  const filled = Value.Default(utility.configSchema, config) as Record<string, unknown>;
  const checker = checkerFor(utility.configSchema);
  if (checker.Check(filled)) return filled;
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of checker.Errors(filled)) {
    const path = `/config${error.path}`;
    if (seen.has(path)) continue;
    seen.add(path);
    errors.push({ path, message: describeConfigError(error.schema, error.message) });
  }
  throw validationError(errors);
}

function describeConfigError(schema: TSchema, message: string): string {
  if (message === "Unexpected property") return "unknown field";
  const choices = (schema.anyOf as TSchema[] | undefined)?.map((option) => option.const);
  if (choices?.every((choice) => choice !== undefined))
    return `must be one of ${choices.map((choice) => JSON.stringify(choice)).join(", ")}`;
  return message;
}

function runFailure(utility: Utility, error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  // budget stops: the run did the work up to its bound, so it costs its credit (docs/api.md, Credits)
  if (error instanceof ResultTooLargeError) {
    return httpError(
      ERRORS.result_too_large,
      `${utility.id} would build an output larger than UTILITY_MAX_OUTPUT_BYTES (${error.limitBytes} bytes); the run's credit is used`,
      { charged: true },
    );
  }
  if (error instanceof ExpressionTooLargeError)
    return httpError(ERRORS.utility_failed, `${error.message}; the run's credit is used`, { charged: true });
  if (error instanceof UtilityConfigError) {
    const path = error.path === "" || error.path.startsWith("/") ? error.path : `/${error.path}`;
    return validationError([{ path: `/config${path}`, message: error.message }]);
  }
  if (error instanceof UtilityError) return httpError(ERRORS.utility_failed, error.message);
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return httpError(ERRORS.utility_failed, `${utility.id} could not process the input: it is nested too deeply`);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return httpError(ERRORS.utility_failed, `${utility.id} could not process the input: ${reason}`);
}
