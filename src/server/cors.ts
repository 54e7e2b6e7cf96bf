/**
 * CORS for browser clients, from CORS_ORIGINS (a list of origins, or `*`). Nothing is added for an
 * origin not listed (or when the list is empty, the default), so such a browser cannot read answers.
 * A preflight (OPTIONS with Access-Control-Request-Method) from a listed origin is answered at once,
 * before authentication (browsers never send a key with it), with an X-Request-Id like every answer.
 *
 * Hand-written rather than @elysiajs/cors: the headers must also reach the answers built outside
 * Elysia's lifecycle (problem+json errors, streamed downloads, compressed bodies), so they are set on
 * the final Response, at the same place compression happens (app.ts).
 */
import type { CorsOrigins } from "../config";
import { requestIdFor } from "./request-id";

const ALLOWED_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
const ALLOWED_HEADERS =
  "Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, If-Range, Last-Event-ID, Range, X-Request-Id";
const EXPOSED_HEADERS = [
  "ETag",
  "Location",
  "Retry-After",
  "Content-Disposition",
  "Idempotent-Replayed",
  "X-Request-Id",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
].join(", ");
const PREFLIGHT_MAX_AGE_SECONDS = "600";

export interface CorsPolicy {
  /** The answer to a preflight from an allowed origin; undefined for every other request. */
  preflight(request: Request): Response | undefined;
  /** Adds the CORS headers an allowed origin needs to read the response. */
  apply(request: Request, response: Response): Response;
}

export function corsPolicy(origins: CorsOrigins): CorsPolicy {
  const listed = origins === "*" ? undefined : new Set(origins);
  const allowOrigin = (request: Request): string | undefined => {
    const origin = request.headers.get("origin");
    if (!origin) return undefined;
    if (origins === "*") return "*";
    return listed!.has(origin) ? origin : undefined;
  };
  const vary = (headers: Headers, names: string) => {
    if (origins === "*") return;
    const current = headers.get("vary");
    headers.set("Vary", current ? `${current}, ${names}` : names);
  };
  return {
    preflight(request) {
      if (request.method !== "OPTIONS" || !request.headers.has("access-control-request-method")) return undefined;
      const origin = allowOrigin(request);
      if (!origin) return undefined;
      const headers = new Headers({
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": ALLOWED_METHODS,
        "Access-Control-Allow-Headers": ALLOWED_HEADERS,
        "Access-Control-Max-Age": PREFLIGHT_MAX_AGE_SECONDS,
        "X-Request-Id": requestIdFor(request),
      });
      vary(headers, "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
      return new Response(null, { status: 204, headers });
    },
    apply(request, response) {
      const origin = allowOrigin(request);
      if (!origin) return response;
      response.headers.set("Access-Control-Allow-Origin", origin);
      response.headers.set("Access-Control-Expose-Headers", EXPOSED_HEADERS);
      vary(response.headers, "Origin");
      return response;
    },
  };
}
