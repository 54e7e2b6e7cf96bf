/**
 * How a request carries a bearer credential, for the API keys (modules/auth) and METRICS_TOKEN
 * (http/metrics) alike:
 *
 * - only in the Authorization header, with the scheme name in any case (`Bearer`, `bearer`, `BEARER`):
 *   RFC 9110 §11.1 makes the auth-scheme case-insensitive;
 * - never in the query string. A credential there (RFC 6750 §2.3's `access_token`) leaks into proxy
 *   logs, browser history and Referer headers, so it is refused with 400 `token_in_query` naming the
 *   header, before the key is looked at: it is never read as a credential, and never logged (the
 *   request log records the path without its query).
 *
 * Hand-written rather than @elysiajs/bearer: docs/architecture.md says why.
 */

import { ERRORS } from "../core/error-codes";
import { type HttpError, httpError } from "../core/errors";

/** The query parameters that would carry a credential (RFC 6750 §2.3). */
export const QUERY_TOKEN_PARAMETERS: readonly string[] = ["access_token"];

/** The token of an `Authorization: Bearer <token>` header value (any case of the scheme), else undefined. */
export function bearerToken(header: string | null): string | undefined {
  // `bearer` in any case, at least one space, the rest trimmed (without a regular expression: every request reads it)
  if (header === null || header.length < 7 || header[6] !== " " || header.slice(0, 6).toLowerCase() !== "bearer") return undefined;
  return header.slice(7).trim() || undefined;
}

/** 400 `token_in_query` when the request's query string names a credential parameter, else undefined. */
export function tokenInQuery(request: Request): HttpError | undefined {
  const url = request.url;
  const query = url.indexOf("?");
  if (query === -1 || !QUERY_TOKEN_PARAMETERS.some((name) => url.includes(name, query))) return undefined;
  const parameters = new URLSearchParams(url.slice(query + 1).split("#")[0]);
  const named = QUERY_TOKEN_PARAMETERS.find((name) => parameters.has(name));
  if (named === undefined) return undefined;
  return httpError(
    ERRORS.token_in_query,
    `A credential is never read from the query string ('${named}'): send it in the Authorization header ('Authorization: Bearer <key>'), and treat the one in the URL as exposed`,
  );
}
