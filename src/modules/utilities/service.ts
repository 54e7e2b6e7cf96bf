/**
 * Utility execution: lookup, credits, and the choice between an inline run (small payloads) and the
 * worker pool (large ones). A credit is reserved before the run and given back when it does not
 * succeed, so failures, timeouts and cancellations cost nothing and concurrent runs cannot overspend.
 */
import type { TObject } from "@sinclair/typebox";
import type { Db } from "../../db/client";
import type { Logger } from "../../http/context";
import { badRequest, HttpError, notFound } from "../../http/errors";
import type { UtilityRegistry } from "../../utilities/registry";
import type { Utility } from "../../utilities/types";
import { PoolBusyError, RunCancelledError, RunTimeoutError, WorkerCrashedError, type WorkerPool } from "../../workers/pool";
import { creditPeriodStart } from "../usage/service";
import { executeBytes, type RunResult } from "./execution";
import { refundCredit, reserveCredit } from "./repository";

export interface UtilityEngine {
  db: Db;
  pool: WorkerPool;
  registry: UtilityRegistry;
  inlineMaxBytes: number;
  logger: Logger;
  now: () => number;
}

export function getUtility(registry: UtilityRegistry, utilityId: string): Utility {
  const utility = registry.find(utilityId);
  if (!utility) throw notFound("utility_not_found", `No utility with id '${utilityId}'; GET /api/v1/utilities lists them`);
  return utility;
}

export function utilityView(utility: Utility) {
  const { id, name, category, description } = utility;
  return { id, name, category, description, configSchema: publishedSchema(utility.configSchema) };
}

const published = new WeakMap<TObject, object>();

/**
 * The config schema as clients should read it: a field with a default may be omitted, so it is not
 * listed as `required` (the TypeBox schema requires it because `run` always receives it filled in).
 */
function publishedSchema(schema: TObject): object {
  let result = published.get(schema);
  if (!result) {
    const required = (schema.required ?? []).filter((key) => schema.properties[key]?.default === undefined);
    const { required: _all, ...rest } = schema;
    result = required.length > 0 ? { ...rest, required } : rest;
    published.set(schema, result);
  }
  return result;
}

export interface ExecuteRequest {
  accountId: string;
  utilityId: string;
  bytes: Uint8Array;
  /** aborts when the client goes away */
  signal?: AbortSignal;
}

/** The success body as JSON text: the output is spliced in as the text the run produced. */
export async function executeUtility(engine: UtilityEngine, request: ExecuteRequest): Promise<string> {
  const utility = getUtility(engine.registry, request.utilityId);
  if (request.bytes.byteLength === 0) throw badRequest("body_required", "A JSON request body `{ inputs: { primary }, config? }` is required");
  const periodStart = creditPeriodStart(engine.now());
  if (!(await reserveCredit(engine.db, request.accountId, periodStart))) {
    throw new HttpError(402, "credits_exhausted", "The account's monthly utility credits are used up; they renew on the first day of next month (UTC)");
  }
  let result: RunResult;
  try {
    result = request.bytes.byteLength <= engine.inlineMaxBytes
      ? await executeBytes(utility, request.bytes)
      : await runInWorker(engine, utility, request);
  } catch (error) {
    await refundCredit(engine.db, request.accountId, periodStart);
    throw error;
  }
  const durationMs = Math.round(result.durationMs * 1000) / 1000;
  return `{"success":true,"output":${result.outputJson},"durationMs":${durationMs},"creditsUsed":1}`;
}

async function runInWorker(engine: UtilityEngine, utility: Utility, request: ExecuteRequest): Promise<RunResult> {
  let outcome;
  try {
    outcome = await engine.pool.run(utility.id, request.bytes, request.signal);
  } catch (error) {
    throw poolFailure(error);
  }
  if (outcome.ok) return outcome;
  if (outcome.status >= 500) {
    engine.logger.log("error", "utility worker failed", { utilityId: utility.id, error: outcome.message });
    throw new HttpError(500, "internal_error", "The utility worker failed unexpectedly");
  }
  throw new HttpError(outcome.status, outcome.code, outcome.message, { errors: outcome.errors });
}

const BUSY_RETRY_SECONDS = 1;
const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function poolFailure(error: unknown): unknown {
  if (error instanceof RunTimeoutError) return new HttpError(408, "utility_timeout", `The utility was stopped: ${error.message}; no credit was used`);
  if (error instanceof PoolBusyError) {
    return new HttpError(503, "busy", `${capitalized(error.message)}; retry after ${BUSY_RETRY_SECONDS} s`, { headers: { "Retry-After": String(BUSY_RETRY_SECONDS) } });
  }
  if (error instanceof RunCancelledError) return new HttpError(499, "request_cancelled", "The client closed the request; the run was stopped");
  if (error instanceof WorkerCrashedError) {
    return badRequest("utility_failed", "The utility stopped while processing this input (it may be too large to process)");
  }
  return error;
}
