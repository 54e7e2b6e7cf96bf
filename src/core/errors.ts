/**
 * The errors Kiln's domain throws: each carries the HTTP status and the machine-readable code of the
 * problem it becomes (rendered by src/http/errors.ts). Plain classes, so the worker threads and the
 * engine throw them without loading the HTTP layers.
 */
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ERRORS, type ErrorEntry } from "./error-codes";

export interface FieldError {
  path: string;
  message: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /**
     * `charged`: a run stopped by one of its budgets keeps its credit (a failure otherwise gives it back);
     * `schema`: the schema a schema_violation was found against
     */
    readonly extra: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      charged?: boolean;
      schema?: { id: string; version: number };
      /** members of the problem beyond the standard ones (a query's suggestedIndex, an index build's progress) */
      members?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
  }
}

/** The error of a catalogue entry (./error-codes.ts), with this occurrence's message. */
export const httpError = (entry: ErrorEntry, message: string, extra?: HttpError["extra"]) =>
  new HttpError(entry.status, entry.code, message, extra);

export const validationError = (errors: FieldError[]) =>
  httpError(ERRORS.validation_failed, errors.map((e) => `${e.path || "/"}: ${e.message}`).join("; "), { errors });
export const unauthorized = (message: string) => httpError(ERRORS.unauthorized, message, { headers: { "WWW-Authenticate": "Bearer" } });
export const forbidden = (message: string) => httpError(ERRORS.forbidden, message);

interface ValidationIssue {
  path?: string;
  message?: string;
  schema?: { error?: unknown };
}

/** Most issues reported for one request: enough to name every field of a real body. */
const MAX_ISSUES = 50;

/**
 * The TypeBox issues of an Elysia ValidationError, read from its validator directly: Elysia's own
 * `all` getter formats each offending value into a template string, which throws (a 500) for a value
 * such as `{"toString": 1, "valueOf": 1}`.
 */
function validationIssues(error: { validator?: unknown; value?: unknown }): ValidationIssue[] {
  const validator = error.validator as { Errors?: (value: unknown) => Iterable<ValidationIssue> } | TSchema | undefined;
  if (!validator) return [];
  const found =
    typeof (validator as { Errors?: unknown }).Errors === "function"
      ? (validator as { Errors: (value: unknown) => Iterable<ValidationIssue> }).Errors(error.value)
      : Value.Errors(validator as TSchema, error.value);
  const issues: ValidationIssue[] = [];
  for (const issue of found) {
    issues.push(issue);
    if (issues.length >= MAX_ISSUES) break;
  }
  return issues;
}

/** TypeBox/Elysia validation errors → `errors[]` with JSON-pointer paths, one entry per field. */
export function fromValidation(error: { validator?: unknown; value?: unknown; message: string }, on: string): HttpError {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const issue of validationIssues(error)) {
    const path = issue.path ?? "";
    if (seen.has(path)) continue;
    seen.add(path);
    errors.push({
      path,
      message:
        issue.message === "Expected required property"
          ? "required field is missing"
          : typeof issue.schema?.error === "string"
            ? issue.schema.error
            : describeIssue(issue),
    });
  }
  if (errors.length === 0) errors.push({ path: "", message: `invalid ${on}` });
  const where = on === "body" ? "" : ` in ${on}`;
  return httpError(ERRORS.validation_failed, errors.map((e) => `${e.path || "/"}${where}: ${e.message}`).join("; "), { errors });
}

function describeIssue(issue: ValidationIssue): string {
  if (issue.message === "Unexpected property") return "unknown field";
  return issue.message ?? "invalid value";
}

/**
 * Errors meaning the database cannot be reached right now (refused or lost connections, a server
 * shutting down or starting up: SQLSTATE classes 08 and 57P), looked for through Drizzle's `cause`.
 */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01",
  "57P02",
  "57P03",
]);

/** The error, or the first of the causes it wraps (Drizzle wraps the driver's), whose code `matches`. */
export function causeWithCode(error: unknown, matches: (code: string) => boolean): { code: string; message: string } | undefined {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && matches(code)) return cause as { code: string; message: string };
  }
  return undefined;
}

const hasCodeInCauses = (error: unknown, matches: (code: string) => boolean) => causeWithCode(error, matches) !== undefined;

export const isDatabaseUnreachable = (error: unknown) =>
  hasCodeInCauses(error, (code) => UNREACHABLE.has(code) || /^08[0-9A-Z]{3}$/.test(code));

/**
 * Errors meaning the database gave up on this transaction to resolve a conflict with another (a deadlock,
 * 40P01, or a serialization failure, 40001): it was rolled back whole, and the same request may pass now.
 */
const CONFLICTS = new Set(["40P01", "40001"]);

export const isDatabaseConflict = (error: unknown) => hasCodeInCauses(error, (code) => CONFLICTS.has(code));

/**
 * Errors meaning a bound on the database ran out (src/config.ts, ConnectionLimits): a lock not granted
 * within the lock timeout (55P03), a statement cancelled (57014: by the statement timeout, or by an
 * operator's pg_cancel_backend), no pool connection free within the acquire timeout. The transaction was
 * rolled back whole. (A transaction left idle past its timeout loses its connection: the server closes it,
 * and the request sees an unreachable database.)
 */
const TIMEOUTS = new Set(["55P03", "57014", "ACQUIRE_TIMEOUT"]);

export const isDatabaseTimeout = (error: unknown) => hasCodeInCauses(error, (code) => TIMEOUTS.has(code));

export const databaseBusy = (message = "The database gave up on this request in a conflict with another; nothing was written; retry") =>
  httpError(ERRORS.database_busy, message, { headers: { "Retry-After": "1" } });

export const databaseTimedOut = () =>
  databaseBusy(
    "The database is too busy to answer this request in time (a lock, a statement or a free connection took too long); nothing was written; retry",
  );

export const databaseUnavailable = () =>
  httpError(ERRORS.database_unavailable, "The database cannot be reached right now; retry shortly", {
    headers: { "Retry-After": "1" },
  });

/**
 * The 503 a passing database fault is answered with, and what to log of it: the database unreachable,
 * a transaction rolled back in a conflict with another, or a bound run out (a lock, a statement, a free
 * connection). Undefined for any other error.
 */
export function databaseFault(error: unknown): { error: HttpError; log: string } | undefined {
  if (isDatabaseUnreachable(error)) return { error: databaseUnavailable(), log: "database unreachable" };
  if (isDatabaseConflict(error)) return { error: databaseBusy(), log: "database conflict, rolled back" };
  if (isDatabaseTimeout(error)) return { error: databaseTimedOut(), log: "database timeout, rolled back" };
  return undefined;
}
