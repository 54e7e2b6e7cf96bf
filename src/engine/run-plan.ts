/**
 * Reading run requests (a utility run, a pipeline run, a saved pipeline's steps) into a RunPlan, with
 * every problem named by its JSON pointer. Small bodies are parsed whole. A large body is read by
 * member spans instead: its inline inputs (`inputs.primary`, `inputs.secondary`) stay unparsed bytes
 * that go to the worker, and only the small rest (ids, config, output, steps) is parsed here.
 */

import { ERRORS } from "../core/error-codes";
import { type FieldError, HttpError, httpError } from "../core/errors";
import { parseJsonBytes } from "../core/json/parse";
import { memberSpans } from "../core/json/scan";
import { type Metadata, normalizeMetadata } from "../core/metadata";
import type { UtilityRegistry } from "../utilities/registry";
import { isObject } from "../utilities/shared/paths";
import type { Utility } from "../utilities/types";
import { validateConfig } from "./execution";
import type { Source } from "./run-result";

/** Where an input comes from: given in the request, or a stored document of the caller's. */
export type InputRef = { source: Source } | { documentId: string };

export interface PlannedStep {
  utility: Utility;
  config: Record<string, unknown>;
  secondary?: InputRef;
}

export interface OutputSpec {
  /** a new document holding the output */
  saveAs?: Metadata & { name: string };
  /** an existing document whose content becomes the output */
  saveTo?: string;
  /** the content ETag saveTo requires (412 otherwise) */
  ifMatch?: string;
  /** false: the response leaves `output` out */
  returnOutput: boolean;
}

export interface RunPlan {
  steps: PlannedStep[];
  primary: InputRef;
  output?: OutputSpec;
  /** a pipeline: errors name the failing step and the response lists every step */
  pipeline: boolean;
}

/** An input value given inline in the body: parsed already, or bytes to parse where the run happens. */
export class InlineInput {
  constructor(readonly source: Source) {}
}

/** A reading of a request: what was understood, and every problem found (nothing is thrown until all are known). */
export interface Reading<T> {
  value: T;
  errors: FieldError[];
}

/**
 * `output"` rather than `"output"`: a search is as cheap as its first byte is rare, and a quote starts
 * every few bytes of JSON (10 MB of records: 0.7 ms against 1.6 ms). Finding more is always safe: a
 * body that only seems to name something is read here, which gives the same answer.
 */
const ENVELOPE_MARKERS = ['DocumentId"', 'output"', "\\u"].map((marker) => Buffer.from(marker));

/**
 * Whether a large utility request must be read here: it names a document or an output (`\u` could
 * spell either). Otherwise the worker reads it whole, and this thread pays three native byte searches.
 */
export function needsReadingHere(bytes: Uint8Array): boolean {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return ENVELOPE_MARKERS.some((marker) => text.indexOf(marker) !== -1);
}

function parseSmall(bytes: Uint8Array): unknown {
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) throw httpError(ERRORS.malformed_json, parsed.message);
  return parsed.value;
}

const INLINE_INPUTS = new Set(["primary", "secondary"]);

/**
 * A run request body as a value whose inline inputs are InlineInputs. `bytes` must own its buffer: the
 * spans of a large body are views of it, later transferred to a worker.
 */
export function readBody(bytes: Uint8Array, large: boolean): unknown {
  if (!large) {
    const body = parseSmall(bytes);
    if (isObject(body) && isObject(body.inputs)) {
      for (const name of INLINE_INPUTS)
        if (Object.hasOwn(body.inputs, name)) body.inputs[name] = new InlineInput({ value: body.inputs[name] });
    }
    return body;
  }
  const members = memberSpans(bytes);
  if (!members) return null;
  const body: Record<string, unknown> = {};
  for (const [key, span] of members) {
    const inputs = key === "inputs" ? memberSpans(span) : undefined;
    body[key] = inputs
      ? Object.fromEntries(
          [...inputs].map(([name, value]) => [name, INLINE_INPUTS.has(name) ? new InlineInput({ json: value }) : parseSmall(value)]),
        )
      : parseSmall(span);
  }
  return body;
}

function pointer(at: string, key: string): string {
  return `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

function unknownFields(object: Record<string, unknown>, known: readonly string[], at: string, errors: FieldError[]): void {
  for (const key of Object.keys(object)) if (!known.includes(key)) errors.push({ path: pointer(at, key), message: "unknown field" });
}

function documentId(value: unknown, path: string, errors: FieldError[]): string {
  if (typeof value !== "string" || value.length === 0) errors.push({ path, message: "must be a document id (doc_…)" });
  return value as string;
}

/** `name` or `nameDocumentId`, exactly one when required, at most one otherwise. */
function inputRef(
  object: Record<string, unknown>,
  name: string,
  at: string,
  required: boolean,
  errors: FieldError[],
): InputRef | undefined {
  const inline = Object.hasOwn(object, name);
  const stored = Object.hasOwn(object, `${name}DocumentId`);
  if (inline && stored) {
    errors.push({ path: `${at}/${name}DocumentId`, message: `give either ${name} or ${name}DocumentId, not both` });
    return undefined;
  }
  if (stored) return { documentId: documentId(object[`${name}DocumentId`], `${at}/${name}DocumentId`, errors) };
  if (inline) {
    const value = object[name];
    return { source: value instanceof InlineInput ? value.source : { value } };
  }
  if (required) errors.push({ path: `${at}/${name}`, message: `required (null is a valid value), or ${name}DocumentId` });
  return undefined;
}

/** Runs validateConfig, collecting its problems under `at` instead of throwing them. */
function configOf(utility: Utility, config: unknown, at: string, errors: FieldError[]): Record<string, unknown> {
  if (config !== undefined && !isObject(config)) {
    errors.push({ path: `${at}/config`, message: "must be an object" });
    return {};
  }
  try {
    return validateConfig(utility, (config as Record<string, unknown> | undefined) ?? {});
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    errors.push(...(error.extra.errors ?? []).map((field) => ({ path: `${at}${field.path}`, message: field.message })));
    return {};
  }
}

function outputOf(given: unknown, errors: FieldError[]): OutputSpec | undefined {
  if (given === undefined) return undefined;
  if (!isObject(given)) {
    errors.push({ path: "/output", message: "must be an object: { saveAs } or { saveTo, ifMatch? }, and/or return: false" });
    return undefined;
  }
  unknownFields(given, ["saveAs", "saveTo", "ifMatch", "return"], "/output", errors);
  const output: OutputSpec = { returnOutput: true };
  if (given.return !== undefined) {
    if (typeof given.return !== "boolean") errors.push({ path: "/output/return", message: "must be a boolean" });
    output.returnOutput = given.return !== false;
  }
  if (given.saveAs !== undefined && given.saveTo !== undefined)
    errors.push({ path: "/output/saveTo", message: "give either saveAs or saveTo, not both" });
  if (given.saveAs !== undefined) output.saveAs = saveAsOf(given.saveAs, errors);
  if (given.saveTo !== undefined) output.saveTo = documentId(given.saveTo, "/output/saveTo", errors);
  if (given.ifMatch !== undefined) {
    if (given.saveTo === undefined) errors.push({ path: "/output/ifMatch", message: "applies to saveTo only" });
    else if (typeof given.ifMatch !== "string" || given.ifMatch.length === 0)
      errors.push({ path: "/output/ifMatch", message: "must be the document's content ETag" });
    else output.ifMatch = given.ifMatch;
  }
  return output;
}

function saveAsOf(given: unknown, errors: FieldError[]): OutputSpec["saveAs"] {
  if (!isObject(given)) {
    errors.push({ path: "/output/saveAs", message: "must be an object: { name, folder?, tags?, description? }" });
    return undefined;
  }
  const fieldErrors: FieldError[] = [];
  unknownFields(given, ["name", "folder", "tags", "description"], "", fieldErrors);
  if (typeof given.name !== "string") fieldErrors.push({ path: "/name", message: "required: a string" });
  if (given.description !== undefined && typeof given.description !== "string")
    fieldErrors.push({ path: "/description", message: "must be a string" });
  if (given.folder !== undefined && given.folder !== null && typeof given.folder !== "string")
    fieldErrors.push({ path: "/folder", message: "must be a string or null" });
  if (given.tags !== undefined && !(Array.isArray(given.tags) && given.tags.every((tag) => typeof tag === "string")))
    fieldErrors.push({ path: "/tags", message: "must be an array of strings" });
  let metadata: Metadata = {};
  if (fieldErrors.length === 0) {
    try {
      metadata = normalizeMetadata(given as { name: string });
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      fieldErrors.push(...(error.extra.errors ?? []));
    }
  }
  errors.push(...fieldErrors.map((field) => ({ path: `/output/saveAs${field.path}`, message: field.message })));
  return metadata as OutputSpec["saveAs"];
}

/** The reading of a body that is not an object: that one problem, and a plan that uses nothing. */
function notAnObject(expected: string, pipeline: boolean): Reading<RunPlan> {
  return {
    value: { steps: [], primary: { source: { value: null } }, pipeline },
    errors: [{ path: "", message: `the request body must be a JSON object ${expected}` }],
  };
}

function inputsObject(body: Record<string, unknown>, errors: FieldError[]): Record<string, unknown> | undefined {
  if (body.inputs === undefined) errors.push({ path: "/inputs", message: "required: an object holding `primary` or `primaryDocumentId`" });
  else if (!isObject(body.inputs)) errors.push({ path: "/inputs", message: "must be an object holding `primary` or `primaryDocumentId`" });
  else return body.inputs;
  return undefined;
}

/** `POST /api/v1/utilities/{id}`: `{ inputs: { primary | primaryDocumentId, secondary? | secondaryDocumentId? }, config?, output? }`. */
export function readUtilityRun(body: unknown, utility: Utility): Reading<RunPlan> {
  if (!isObject(body)) return notAnObject("with `inputs`", false);
  const object = body;
  const errors: FieldError[] = [];
  unknownFields(object, ["inputs", "config", "output"], "", errors);
  const inputs = inputsObject(object, errors) ?? {};
  unknownFields(inputs, ["primary", "primaryDocumentId", "secondary", "secondaryDocumentId"], "/inputs", errors);
  const primary = inputRef(inputs, "primary", "/inputs", isObject(object.inputs), errors);
  const secondary = inputRef(inputs, "secondary", "/inputs", false, errors);
  const config = configOf(utility, object.config, "", errors);
  const output = outputOf(object.output, errors);
  const step: PlannedStep = { utility, config, ...(secondary ? { secondary } : {}) };
  return { value: { steps: [step], primary: primary!, output, pipeline: false }, errors };
}

export const MAX_STEPS = 20;

/** A saved or posted list of steps: `[{ utility, config?, secondary?, secondaryDocumentId? }]`, 1–20. */
export function readSteps(given: unknown, registry: UtilityRegistry, errors: FieldError[]): PlannedStep[] {
  if (!Array.isArray(given) || given.length === 0 || given.length > MAX_STEPS) {
    errors.push({
      path: "/steps",
      message: `required: an array of 1 to ${MAX_STEPS} steps { utility, config?, secondary?, secondaryDocumentId? }`,
    });
    return [];
  }
  const steps: PlannedStep[] = [];
  given.forEach((step, index) => {
    const at = `/steps/${index}`;
    if (!isObject(step)) {
      errors.push({ path: at, message: "must be an object { utility, config?, secondary?, secondaryDocumentId? }" });
      return;
    }
    unknownFields(step, ["utility", "config", "secondary", "secondaryDocumentId"], at, errors);
    const utility = typeof step.utility === "string" ? registry.find(step.utility) : undefined;
    if (!utility) {
      const problem =
        typeof step.utility === "string"
          ? `unknown utility '${step.utility}'; GET /api/v1/utilities lists them`
          : "required: a utility id such as generate.filter";
      errors.push({ path: `${at}/utility`, message: problem });
      return;
    }
    const secondary = inputRef(step, "secondary", at, false, errors);
    steps.push({ utility, config: configOf(utility, step.config, at, errors), ...(secondary ? { secondary } : {}) });
  });
  return steps;
}

/**
 * `POST /api/v1/pipelines/run` (`steps` in the body) and `POST /api/v1/pipelines/{id}/run` (the saved
 * steps given, `{ inputs, output? }` in the body).
 */
export function readPipelineRun(body: unknown, registry: UtilityRegistry, savedSteps?: unknown): Reading<RunPlan> {
  if (!isObject(body)) return notAnObject(savedSteps === undefined ? "with `steps` and `inputs`" : "with `inputs`", true);
  const object = body;
  const errors: FieldError[] = [];
  unknownFields(object, savedSteps === undefined ? ["steps", "inputs", "output"] : ["inputs", "output"], "", errors);
  const inputs = inputsObject(object, errors) ?? {};
  unknownFields(inputs, ["primary", "primaryDocumentId"], "/inputs", errors);
  const primary = inputRef(inputs, "primary", "/inputs", isObject(object.inputs), errors);
  const steps = readSteps(savedSteps ?? object.steps, registry, errors);
  const output = outputOf(object.output, errors);
  return { value: { steps, primary: primary!, output, pipeline: true }, errors };
}

/** Whether the run reads or writes documents: the key then needs the `documents` permission too. */
export function usesDocuments(plan: RunPlan): boolean {
  const inputs = [plan.primary, ...plan.steps.map((step) => step.secondary)];
  return (
    inputs.some((input) => input !== undefined && "documentId" in input) ||
    plan.output?.saveAs !== undefined ||
    plan.output?.saveTo !== undefined
  );
}
