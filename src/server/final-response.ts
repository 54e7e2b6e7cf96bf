/**
 * The fetch wrapper around the app: CORS and compression act on the final Response, whichever part of
 * the app built it (a route, the error handler, an idempotent replay), so no route can forget them.
 */
import type { CorsOrigins } from "../config";
import { compressResponse } from "./compression";
import { corsPolicy } from "./cors";

export function withCorsAndCompression(
  handle: (request: Request) => Promise<Response>,
  origins: CorsOrigins,
): (request: Request) => Promise<Response> {
  const cors = corsPolicy(origins);
  // one `then` on the app's answer: one that needs no compression costs no further promise
  return (request) => {
    const preflight = cors.preflight(request);
    if (preflight) return Promise.resolve(preflight);
    return handle(request).then((response) => {
      const sent = compressResponse(request, response);
      return sent instanceof Promise ? sent.then((compressed) => cors.apply(request, compressed)) : cors.apply(request, sent);
    });
  };
}
