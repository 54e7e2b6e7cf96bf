/**
 * The fetch wrapper around the app: CORS and compression act on the final Response, whichever part of
 * the app built it (a route, the error handler, an idempotent replay), so no route can forget them.
 */
import type { CorsOrigins } from "../config";
import { compressResponse } from "./compression";
import { corsPolicy } from "./cors";
import type { FetchHandler } from "./transport";

export function withCorsAndCompression(handle: FetchHandler, origins: CorsOrigins): (request: Request) => Promise<Response> {
  const cors = corsPolicy(origins);
  return async (request) => cors.preflight(request) ?? cors.apply(request, await compressResponse(request, await handle(request)));
}
