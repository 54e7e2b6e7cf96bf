/**
 * GET /metrics in the Prometheus text format, behind METRICS_TOKEN (a bearer token; unset: the route
 * answers 404 like any unknown route, and nothing is measured), and the measurement of every request.
 */
import { timingSafeEqual } from "node:crypto";
import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../core/error-codes";
import { httpError } from "../core/errors";
import type { Metrics } from "../observability/metrics";
import { requestState } from "../server/request-state";
import { bearerToken, tokenInQuery } from "./bearer";
import { statusSent } from "./context";
import { operation } from "./openapi";

/** Route templates only: a request that matched no route is counted under one label. */
const UNMATCHED_ROUTE = "unmatched";

/** Whether the Authorization header carries `token` with the Bearer scheme in any case (RFC 9110 §11.1), as /api reads keys. */
function tokenMatches(header: string | null, token: string): boolean {
  const presented = bearerToken(header);
  if (presented === undefined) return false;
  const given = Buffer.from(presented);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The /metrics route and the per-request measurement; without a token the route is a plain 404. */
export const metricsPlugin = (metrics: Metrics | undefined, token: string | undefined) => {
  const plugin = new Elysia({ name: "kiln.metrics", detail: { tags: ["Operations"] } }).get(
    "/metrics",
    async ({ request, path, set }) => {
      if (!metrics || !token) throw httpError(ERRORS.route_not_found, `No route for GET ${path}`);
      const inQuery = tokenInQuery(request);
      if (inQuery) throw inQuery;
      if (!tokenMatches(request.headers.get("authorization"), token)) {
        throw httpError(ERRORS.unauthorized, "GET /metrics needs 'Authorization: Bearer <METRICS_TOKEN>'", {
          headers: { "WWW-Authenticate": "Bearer" },
        });
      }
      set.headers["content-type"] = metrics.registry.contentType;
      return metrics.registry.metrics();
    },
    {
      detail: {
        ...operation({
          operationId: "getMetrics",
          summary: "Prometheus metrics",
          description:
            "Requests, utility runs, worker pool, database pool, sweepers and content store, in the Prometheus text format. Needs `Authorization: Bearer <METRICS_TOKEN>`; without METRICS_TOKEN the route answers 404 like any unknown path.",
          errors: {
            401: problems`${ERRORS.unauthorized}: no METRICS_TOKEN or a wrong one`,
            404: problems`${ERRORS.route_not_found}: METRICS_TOKEN is not set`,
          },
          headers: { 401: ["WWW-Authenticate"] },
          responses: {
            200: {
              description: "The metrics",
              content: {
                "text/plain": t.String({
                  description: "Prometheus text exposition format 0.0.4 (Content-Type text/plain; version=0.0.4; charset=utf-8)",
                }),
              },
            },
          },
        }),
        security: [{ metricsToken: [] }],
      },
    },
  );
  if (!metrics) return plugin;
  return plugin.onAfterResponse({ as: "global" }, ({ request, set, route, responseValue }) => {
    const state = requestState(request);
    metrics.observeRequest(
      request.method,
      route || UNMATCHED_ROUTE,
      statusSent(state, responseValue, set.status),
      (performance.now() - state.startedAt) / 1000,
    );
  });
};
