/**
 * What each part of Kiln's request path costs a loaded server, as one more part at a time in front of the
 * bare baseline's own handler (bench/baseline/server.ts), each side in a process of its own:
 *
 * - `bare`: the bare handler, as bench/documents.ts runs it;
 * - `elysia`: an Elysia app (`normalize: false`, as Kiln's) whose routes for a document and for the list
 *   return the bare handler's Response, served as Kiln's app is served (`Bun.serve` calling `app.handle`):
 *   what any Elysia app costs before its own work;
 * - `+ a derive`: with an async `derive` that returns a constant principal, as Kiln's authentication hook
 *   is one;
 * - `+ Kiln's auth`: with Kiln's authentication plugin instead (src/modules/auth: the derive and the
 *   authenticator's decision, a cached key);
 * - `+ Kiln's global plugins`: also Kiln's error handler, body parser and metrics plugin (without a token);
 * - `+ Kiln's listener and wrappers`: also served through Kiln's listener (src/server/listener.ts), the
 *   request state and its id, and the final-response wrapper (CORS and compression) with the header copy
 *   of app.ts;
 * - `Kiln's app without background work`: Kiln's whole app (createApp) through Kiln's listener, its worker
 *   pool started, none of the sweeps, loops and job runner of src/index.ts;
 * - `kiln`: Kiln's server.
 *
 * wrk loads each side in turn (get metadata, or with `--case list` a page of 50; 8 connections), the
 * order reversed every round; each round records the requests/s and the process's CPU time per request
 * (user + system from /proc). Each side is also compared with the first side round by round (the two ran
 * seconds apart): on a host whose rates swing by tens of percent from one minute to the next, the median
 * of these paired ratios moves far less than the ratio of the medians.
 *
 *   bun bench/experiments/behind-elysia.ts [--rounds 8] [--seconds 4] [--mode external|embedded] [--case get|list]
 *                                          [--sides "bare,elysia,…"]   (names as above, comma-separated)
 *
 * Started with BEHIND_ELYSIA set to a side's name, this file is that side's server instead.
 */
import { parseArgs } from "node:util";
import { Elysia } from "elysia";
import { loadAverage, median } from "../lib/report";
import { createSmallDocuments, type Server, startBare, startKiln, startProcess, stopAll } from "../lib/servers";
import { ensureTool } from "../lib/tools";
import { alternatingRounds, load } from "../lib/wrk";

type Fetch = (request: Request) => Response | Promise<Response>;

const VARIANTS = [
  "elysia",
  "+ a derive",
  "+ Kiln's auth",
  "+ Kiln's global plugins",
  "+ Kiln's listener and wrappers",
  "Kiln's app without background work",
] as const;

if (process.env.BEHIND_ELYSIA) await serve(process.env.BEHIND_ELYSIA as (typeof VARIANTS)[number]);
else await compare();

async function serve(variant: (typeof VARIANTS)[number]): Promise<void> {
  const { handleBare } = await import("../baseline/server");
  const { connect } = await import("../../src/db/client");
  const { Authenticator, authentication } = await import("../../src/modules/auth");
  const { errorHandler, methodsAllowed } = await import("../../src/http/errors");
  const { bodyParser } = await import("../../src/http/body");
  const { metricsPlugin } = await import("../../src/http/metrics");
  const { createLogger } = await import("../../src/observability/logger");
  const { withCorsAndCompression } = await import("../../src/server/final-response");
  const { addStateHeaders, requestState } = await import("../../src/server/request-state");
  const { listen } = await import("../../src/server/listener");
  const database = connect(process.env.DATABASE_URL!);
  const authenticator = new Authenticator(database.db);
  const logger = createLogger("error");
  const on = { kind: "bun" as const, port: Number(process.env.PORT), hostname: "127.0.0.1" };
  const bareRoutes = new Elysia({ name: "bare routes" })
    .get("/health", () => "ok")
    .get("/api/v1/documents", ({ request }) => handleBare(request))
    .get("/api/v1/documents/:id", ({ request }) => handleBare(request));
  const kilnPlugins = () => {
    const app: Elysia = new Elysia({ normalize: false });
    return app
      .use(
        errorHandler({
          logger,
          authorizeUnknownRoute: (request, path) => authenticator.authorize(request, path),
          methodsAllowed: (path) => methodsAllowed(app.routes, path),
        }),
      )
      .use(
        bodyParser({
          limitFor: () => ({ bytes: 1 << 20, tooLarge: () => new Error("too large") as never }),
          rawRoutes: new Set(),
          authorize: (request, path) => authenticator.authorize(request, path),
        }),
      )
      .use(metricsPlugin(undefined, undefined))
      .use(authentication(authenticator))
      .use(bareRoutes);
  };
  const sides: Record<(typeof VARIANTS)[number], () => Promise<Fetch>> = {
    elysia: async () => {
      const app = new Elysia({ normalize: false }).use(bareRoutes);
      return (request) => app.handle(request);
    },
    "+ a derive": async () => {
      const principal = { accountId: "bench" };
      const app = new Elysia({ normalize: false }).derive({ as: "global" }, async () => ({ principal })).use(bareRoutes);
      return (request) => app.handle(request);
    },
    "+ Kiln's auth": async () => {
      const app = new Elysia({ normalize: false }).use(authentication(authenticator)).use(bareRoutes);
      return (request) => app.handle(request);
    },
    "+ Kiln's global plugins": async () => {
      const app = kilnPlugins();
      return (request) => app.handle(request);
    },
    "+ Kiln's listener and wrappers": async () => {
      const app = kilnPlugins();
      // as app.ts's handler does it, without the event notification (a read never writes)
      return withCorsAndCompression(async (request) => {
        const state = requestState(request);
        const response = await app.handle(request);
        addStateHeaders(state, response);
        return response;
      }, []);
    },
    "Kiln's app without background work": async () => {
      const { createApp } = await import("../../src/app");
      const { loadConfig } = await import("../../src/config");
      const { createWorkerPool } = await import("../../src/engine/pool");
      const { registry } = await import("../../src/utilities/registry");
      const config = loadConfig({ DATA_DIR: process.env.DATA_DIR!, DATABASE_URL: process.env.DATABASE_URL!, LOG_LEVEL: "error" });
      const workerPool = await createWorkerPool(config, registry.module).start();
      return createApp({ config, database, workerPool, logger }).handle;
    },
  };
  const fetch = await sides[variant]();
  // the first four as any Elysia app is served; the last two through Kiln's listener
  if (VARIANTS.indexOf(variant) < 4) Bun.serve({ ...on, fetch });
  else await listen(on, fetch);
}

async function compare(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "8" },
      seconds: { type: "string", default: "4" },
      mode: { type: "string", default: "external" },
      case: { type: "string", default: "get" },
      sides: { type: "string", default: ["bare", ...VARIANTS, "kiln"].join(",") },
    },
  });
  if (values.case !== "get" && values.case !== "list") throw new Error(`--case is get or list, not ${values.case}`);
  ensureTool("wrk", "wrk");
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  try {
    const kiln = await startKiln(values.mode as "embedded" | "external");
    const bare = await startBare(kiln);
    const wanted = values.sides!.split(",");
    const sides: [string, Pick<Server, "url" | "pid">][] = wanted.includes("bare") ? [["bare", bare]] : [];
    for (const variant of VARIANTS.filter((each) => wanted.includes(each))) {
      const env = {
        BEHIND_ELYSIA: variant,
        DATABASE_URL: kiln.databaseUrl,
        DATA_DIR: kiln.dataDir,
        CONTENT_DIR: `${kiln.dataDir}/content`,
      };
      sides.push([variant, await startProcess(variant, "experiments/behind-elysia.ts", env)]);
    }
    if (wanted.includes("kiln")) sides.push(["kiln", kiln]);
    const ids = await createSmallDocuments(kiln.url, kiln.key, (i) => `e${i}`);
    const paths = values.case === "list" ? ["/api/v1/documents?limit=50"] : ids.map((id) => `/api/v1/documents/${id}`);
    const spec = { method: "GET" as const, paths, key: kiln.key, connections: 8 };
    for (const [, side] of sides) load({ ...spec, base: side.url, seconds: 10 }); // warm-up: JIT, pools
    const loadBefore = loadAverage();
    const measured = alternatingRounds(sides, spec, rounds, seconds);
    console.log(
      `${values.case === "list" ? "list a page of 50" : "get metadata"}, ${values.mode} PostgreSQL, ${rounds} rounds of ${seconds} s, 8 connections; load average ${loadBefore.toFixed(2)}`,
    );
    const [first, firstMeasured] = [...measured][0]!;
    for (const [name, { rps, cpuUs: us }] of measured) {
      // each round's ratio to the first side's round: the two ran seconds apart, on the same machine state
      const paired = us.map((each, round) => each / firstMeasured.cpuUs[round]!);
      const ratio =
        name === first
          ? ""
          : ` (${(median(rps) / median(firstMeasured.rps)).toFixed(2)}× ${first}'s median rate; CPU ${median(paired).toFixed(3)}× ${first}'s, median of the rounds)`;
      console.log(
        `  ${name}: median ${Math.round(median(rps)).toLocaleString("en")}/s${ratio}, ${median(us).toFixed(1)} µs CPU/request (least ${Math.min(...us).toFixed(1)}) ` +
          `(rounds: ${rps.map((each) => Math.round(each)).join(", ")}/s; ${us.map((each) => each.toFixed(1)).join(", ")} µs)`,
      );
    }
    console.log(`load average ${loadBefore.toFixed(2)} before, ${loadAverage().toFixed(2)} after`);
  } finally {
    await stopAll();
  }
}
