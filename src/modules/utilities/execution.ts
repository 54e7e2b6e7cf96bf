/**
 * One utility run from the request bytes to the output JSON text: parse (depth-checked), check the
 * body, validate the config against the utility's schema with defaults filled, run, serialise. Pure,
 * with no database or HTTP server: the main thread runs it inline for small payloads and the worker
 * threads run the very same code for large ones, so both give the same answer.
 */
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import type { TObject, TSchema } from "@sinclair/typebox";
import { badRequest, HttpError, validationError, type FieldError } from "../../http/errors";
import { parseJsonBytes } from "../../http/json";
import { isObject } from "../../utilities/lib/paths";
import { UtilityConfigError, UtilityError, type Utility, type UtilityInputs } from "../../utilities/types";
import { runStreamed } from "./streaming";

/**
 * The output as JSON text, so that a worker's answer is never parsed again on the main thread, or, for a
 * streamed record-wise run (./streaming.ts), as UTF-8 chunks.
 */
export type RunResult = ({ outputJson: string } | { outputChunks: Uint8Array[] }) & { durationMs: number };

export async function executeBytes(utility: Utility, bytes: Uint8Array): Promise<RunResult> {
  const streamed = runStreamed(utility, bytes);
  if (streamed) return { outputChunks: streamed.chunks, durationMs: streamed.durationMs };
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) throw badRequest("malformed_json", parsed.message);
  const { inputs, config } = checkRequest(parsed.value);
  return runUtility(utility, inputs, validateConfig(utility, config));
}

const BODY_FIELDS = new Set(["inputs", "config"]);
const INPUT_FIELDS = new Set(["primary", "secondary"]);

/** `{ inputs: { primary, secondary? }, config? }`; every problem is named by its JSON pointer. */
export function checkRequest(body: unknown): { inputs: UtilityInputs; config: Record<string, unknown> } {
  if (!isObject(body)) throw validationError([{ path: "", message: "the request body must be a JSON object with `inputs`" }]);
  const errors: FieldError[] = unknownFields(body, BODY_FIELDS, "");
  const { inputs, config } = body;
  if (inputs === undefined) errors.push({ path: "/inputs", message: "required: an object holding `primary`" });
  else if (!isObject(inputs)) errors.push({ path: "/inputs", message: "must be an object holding `primary`" });
  else {
    errors.push(...unknownFields(inputs, INPUT_FIELDS, "/inputs"));
    if (!Object.hasOwn(inputs, "primary")) errors.push({ path: "/inputs/primary", message: "required (null is a valid value)" });
  }
  if (config !== undefined && !isObject(config)) errors.push({ path: "/config", message: "must be an object" });
  if (errors.length > 0) throw validationError(errors);
  const given = inputs as Record<string, unknown>;
  return {
    inputs: Object.hasOwn(given, "secondary") ? { primary: given.primary, secondary: given.secondary } : { primary: given.primary },
    config: (config as Record<string, unknown> | undefined) ?? {},
  };
}

function unknownFields(object: Record<string, unknown>, known: ReadonlySet<string>, at: string): FieldError[] {
  return Object.keys(object).filter((key) => !known.has(key)).map((key) => ({ path: `${at}/${pointerSegment(key)}`, message: "unknown field" }));
}

function pointerSegment(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
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
  if (choices && choices.every((choice) => choice !== undefined)) return `must be one of ${choices.map((choice) => JSON.stringify(choice)).join(", ")}`;
  return message;
}

/** Runs the utility and serialises its output; whatever it throws becomes a 400. */
export async function runUtility(utility: Utility, inputs: UtilityInputs, config: Record<string, unknown>): Promise<RunResult> {
  const started = performance.now();
  let output: unknown;
  try {
    output = await utility.run(inputs, config);
  } catch (error) {
    throw runFailure(utility, error);
  }
  const durationMs = performance.now() - started;
  let outputJson: string | undefined;
  try {
    outputJson = JSON.stringify(output);
  } catch (error) {
    throw runFailure(utility, error);
  }
  return { outputJson: outputJson ?? "null", durationMs };
}

function runFailure(utility: Utility, error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof UtilityConfigError) {
    const path = error.path === "" || error.path.startsWith("/") ? error.path : `/${error.path}`;
    return validationError([{ path: `/config${path}`, message: error.message }]);
  }
  if (error instanceof UtilityError) return badRequest("utility_failed", error.message);
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return badRequest("utility_failed", `${utility.id} could not process the input: it is nested too deeply`);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return badRequest("utility_failed", `${utility.id} could not process the input: ${reason}`);
}
