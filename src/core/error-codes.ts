/**
 * Every problem Kiln answers, as data: its stable `code`, its HTTP status, the status's `title` and what
 * it means. Errors are thrown from an entry (`httpError(ERRORS.document_not_found, …)` in ./errors.ts), and
 * routes declare the problems they answer from entries (`problems` below, read by src/http/openapi/), so
 * a code is spelled once, here. A code that two statuses carry has one entry per status.
 */

/**
 * The `title` of a problem: the status's reason phrase (RFC 9110 §15; 429 and 431 from RFC 6585, 507
 * from RFC 4918, 499 as nginx names it). Every status Kiln sends is here: tests/http/errors.test.ts
 * greps the source for the statuses thrown and fails on one without its phrase.
 */
export const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  499: "Client Closed Request",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  507: "Insufficient Storage",
};

export interface ErrorEntry {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly meaning: string;
}

const catalogue = <Name extends string>(entries: Record<Name, Omit<ErrorEntry, "title">>): Readonly<Record<Name, ErrorEntry>> =>
  Object.freeze(
    Object.fromEntries(
      Object.entries<Omit<ErrorEntry, "title">>(entries).map(([name, entry]) => [
        name,
        Object.freeze({ ...entry, title: STATUS_TITLES[entry.status] ?? "Error" }),
      ]),
    ) as Record<Name, ErrorEntry>,
  );

export const ERRORS = catalogue({
  // the request itself
  validation_failed: { code: "validation_failed", status: 400, meaning: "errors[] names each invalid field or parameter" },
  malformed_json: { code: "malformed_json", status: 400, meaning: "the body is not JSON" },
  body_required: { code: "body_required", status: 400, meaning: "the body is empty" },
  invalid_cursor: { code: "invalid_cursor", status: 400, meaning: "the cursor is not the nextCursor of a previous answer" },
  token_in_query: { code: "token_in_query", status: 400, meaning: "a key or token in the query string, not the Authorization header" },
  invalid_idempotency_key: {
    code: "invalid_idempotency_key",
    status: 400,
    meaning: "the Idempotency-Key is not 1 to 255 printable ASCII characters",
  },
  document_too_large: { code: "document_too_large", status: 413, meaning: "a body or a document over the size allowed" },
  unsupported_media_type: { code: "unsupported_media_type", status: 415, meaning: "a Content-Encoding or Content-Type Kiln does not take" },
  method_not_allowed: {
    code: "method_not_allowed",
    status: 405,
    meaning: "the path exists, not with this method (Allow lists those it has)",
  },
  route_not_found: { code: "route_not_found", status: 404, meaning: "no route for this method and path" },
  request_cancelled: { code: "request_cancelled", status: 499, meaning: "the client went away before the answer" },

  // who is asking
  unauthorized: {
    code: "unauthorized",
    status: 401,
    meaning: "no key, not the Bearer scheme, or a key that is unknown, revoked or expired",
  },
  forbidden: { code: "forbidden", status: 403, meaning: "the key lacks the permission this needs" },
  rate_limited: { code: "rate_limited", status: 429, meaning: "the account's requests per minute are used up" },
  too_many_failed_authentications: {
    code: "too_many_failed_authentications",
    status: 429,
    meaning: "too many unknown, revoked or expired keys from this client",
  },
  idempotency_in_progress: {
    code: "idempotency_in_progress",
    status: 409,
    meaning: "a request with this Idempotency-Key is still running",
  },
  idempotency_answer_not_kept: {
    code: "idempotency_answer_not_kept",
    status: 409,
    meaning: "the first request with this Idempotency-Key was carried out, but its answer was too large to keep",
  },
  idempotency_key_reused: {
    code: "idempotency_key_reused",
    status: 422,
    meaning: "this Idempotency-Key was used with another request (method, path or body)",
  },

  // resources
  account_not_found: { code: "account_not_found", status: 404, meaning: "no such account" },
  key_not_found: { code: "key_not_found", status: 404, meaning: "no such API key in the account" },
  document_not_found: { code: "document_not_found", status: 404, meaning: "no such document in the account" },
  version_not_found: { code: "version_not_found", status: 404, meaning: "the document keeps no such version" },
  pipeline_not_found: { code: "pipeline_not_found", status: 404, meaning: "no such pipeline in the account" },
  utility_not_found: { code: "utility_not_found", status: 404, meaning: "no utility with this id" },
  webhook_not_found: { code: "webhook_not_found", status: 404, meaning: "no such webhook in the account" },
  delivery_not_found: { code: "delivery_not_found", status: 404, meaning: "no such delivery of the webhook" },
  schema_not_found: { code: "schema_not_found", status: 404, meaning: "no such schema in the account (or no such version of it)" },
  document_not_deleted: { code: "document_not_deleted", status: 409, meaning: "the document is active, not in the trash" },
  edit_conflict: { code: "edit_conflict", status: 409, meaning: "another edit of the document came first" },
  precondition_failed: {
    code: "precondition_failed",
    status: 412,
    meaning: "an If-Match (or output.ifMatch) does not match the current ETag",
  },
  range_not_satisfiable: { code: "range_not_satisfiable", status: 416, meaning: "the Range starts past the end of the content" },
  link_invalid: {
    code: "link_invalid",
    status: 403,
    meaning: "a download link with a missing or malformed parameter or a wrong signature",
  },
  link_expired: { code: "link_expired", status: 410, meaning: "the download link is past its expiry" },
  link_outdated: { code: "link_outdated", status: 410, meaning: "the document was deleted or its content changed since the link was made" },
  webhook_url_refused: { code: "webhook_url_refused", status: 400, meaning: "a webhook URL Kiln will not call" },
  webhook_limit_reached: { code: "webhook_limit_reached", status: 409, meaning: "the account has its most webhooks" },
  webhook_disabled: { code: "webhook_disabled", status: 409, meaning: "the webhook is disabled" },
  index_not_found: { code: "index_not_found", status: 404, meaning: "no such query index in the account" },
  index_limit_reached: { code: "index_limit_reached", status: 409, meaning: "the account has its most query indexes (maxIndexes)" },
  index_name_taken: { code: "index_name_taken", status: 409, meaning: "the account has an index of this name" },
  index_building: {
    code: "index_building",
    status: 409,
    meaning: "the index that serves the query is still being built; progress tells how far",
  },
  index_unique_conflict: {
    code: "index_unique_conflict",
    status: 409,
    meaning: "the write would give a unique index a key another document holds (index and document name them)",
  },
  index_value_refused: {
    code: "index_value_refused",
    status: 400,
    meaning: "the content has a value or an array a declared index cannot hold (maxIndexedValueBytes, maxIndexedArrayElements)",
  },
  query_invalid: {
    code: "query_invalid",
    status: 400,
    meaning: "errors[] names each invalid part of the query by its pointer into the body",
  },
  query_needs_index: {
    code: "query_needs_index",
    status: 400,
    meaning: "no index of the folder serves the query; suggestedIndex can be POSTed to /api/v1/indexes as it is",
  },
  delivery_in_flight: { code: "delivery_in_flight", status: 409, meaning: "an attempt of the delivery is under way" },
  document_changed: {
    code: "document_changed",
    status: 409,
    meaning: "a job's document changed since the job read it, so its output was not written (in a job's results)",
  },
  job_not_found: { code: "job_not_found", status: 404, meaning: "no such job in the account" },
  job_finished: { code: "job_finished", status: 409, meaning: "the job has finished (succeeded, failed or cancelled)" },
  job_source_empty: { code: "job_source_empty", status: 400, meaning: "the job's source names no document" },
  job_source_unsupported: { code: "job_source_unsupported", status: 400, meaning: "this kind of job source is not available" },
  job_too_large: {
    code: "job_too_large",
    status: 413,
    meaning: "the job's source holds more documents than a job may (JOBS_MAX_DOCUMENTS)",
  },

  // what the account holds and spends
  credits_exhausted: { code: "credits_exhausted", status: 402, meaning: "the account's monthly credits are used up" },
  storage_limit_exceeded: { code: "storage_limit_exceeded", status: 413, meaning: "the account's storage would be over its limit" },
  account_busy: {
    code: "account_busy",
    status: 429,
    meaning: "the account already has its most runs waiting for a worker (UTILITY_QUEUE_PER_ACCOUNT)",
  },
  too_many_jobs: {
    code: "too_many_jobs",
    status: 429,
    meaning: "the account already has its most jobs waiting to run (its plan's maxQueuedJobs)",
  },
  too_many_streams: {
    code: "too_many_streams",
    status: 429,
    meaning: "the key or the account has its most event streams open on this node",
  },

  // running utilities, pipelines and patches
  utility_failed: { code: "utility_failed", status: 400, meaning: "the utility could not process the input" },
  utility_timeout: { code: "utility_timeout", status: 408, meaning: "the run was stopped at UTILITY_TIMEOUT_MS" },
  payload_too_large: {
    code: "payload_too_large",
    status: 413,
    meaning: "the request plus the stored inputs are over UTILITY_MAX_PAYLOAD_BYTES",
  },
  result_too_large: { code: "result_too_large", status: 413, meaning: "the run would build more than its output or memory bound" },
  pipeline_too_large: { code: "pipeline_too_large", status: 413, meaning: "a pipeline definition over 1 MiB" },
  patch_invalid: { code: "patch_invalid", status: 400, meaning: "not a valid patch, or a path that does not exist" },
  patch_test_failed: { code: "patch_test_failed", status: 409, meaning: "a test operation found a different value" },
  patch_timeout: { code: "patch_timeout", status: 408, meaning: "a patch applied in a worker ran past UTILITY_TIMEOUT_MS" },
  patch_too_expensive: { code: "patch_too_expensive", status: 413, meaning: "the patch would copy more than its work bound" },
  schema_invalid: {
    code: "schema_invalid",
    status: 400,
    meaning: "the JSON Schema is invalid, too large or too deep, or names a schema that is not the account's (errors[] by pointer)",
  },
  schema_folder_taken: { code: "schema_folder_taken", status: 409, meaning: "a folder given is already governed by another schema" },
  schema_uri_taken: { code: "schema_uri_taken", status: 409, meaning: "another schema of the account has the same $id" },
  schema_limit_reached: { code: "schema_limit_reached", status: 409, meaning: "the account holds its maximum of 100 schemas" },
  schema_in_use: { code: "schema_in_use", status: 409, meaning: "the schema still governs folders: unbind them first" },
  schema_violation: {
    code: "schema_violation",
    status: 422,
    meaning: "the content breaks its folder's schema (mode reject): schema { id, version } and errors[] say where; nothing was written",
  },
  schema_validation_too_expensive: {
    code: "schema_validation_too_expensive",
    status: 413,
    meaning: "the content could not be validated within the time or depth budget; nothing was written",
  },

  // the server and what it depends on
  internal_error: { code: "internal_error", status: 500, meaning: "an unforeseen failure, logged with the request id" },
  worker_failed: { code: "worker_failed", status: 500, meaning: "a worker thread failed outside the utility's own errors" },
  content_missing: { code: "content_missing", status: 500, meaning: "the content is missing from the content store (logged)" },
  busy: { code: "busy", status: 503, meaning: "every utility worker is busy and UTILITY_QUEUE_LIMIT runs wait" },
  too_many_streams_on_node: {
    code: "too_many_streams",
    status: 503,
    meaning: "this node serves its most event streams (EVENT_STREAMS_PER_PROCESS)",
  },
  database_unavailable: { code: "database_unavailable", status: 503, meaning: "the database cannot be reached right now" },
  database_busy: {
    code: "database_busy",
    status: 503,
    meaning: "the database rolled the request back (a conflict, or a bound ran out); nothing was written",
  },
  database_pool_stalled: {
    code: "database_pool_stalled",
    status: 503,
    meaning: "queries have waited longer than DATABASE_STALLED_HEALTH_MS for a database connection",
  },
  content_store_unavailable: { code: "content_store_unavailable", status: 503, meaning: "the content store cannot be reached" },
  insufficient_storage: { code: "insufficient_storage", status: 507, meaning: "the content store has no room" },
  not_ready: { code: "not_ready", status: 503, meaning: "the database or the content store does not answer" },
  draining: { code: "draining", status: 503, meaning: "the node is shutting down" },
});

/** The problems one status of a route answers: the codes, in order, and the description that names them. */
export interface Problems {
  readonly codes: readonly string[];
  readonly description: string;
}

/**
 * A route's description of one problem status, written as prose around catalogue entries:
 * problems`${ERRORS.pipeline_not_found} (also another account's)`. Each entry reads as its code in the
 * description and is listed in `codes`, once, in the order written.
 */
export function problems(strings: TemplateStringsArray, ...entries: ErrorEntry[]): Problems {
  let description = strings[0];
  entries.forEach((entry, index) => {
    description += entry.code + strings[index + 1];
  });
  return { codes: [...new Set(entries.map((entry) => entry.code))], description };
}
