/**
 * createApp(deps) composes the plugins and feature modules. It never listens, so tests build it
 * in-process and call app.handle(new Request(...)).
 */
import { Elysia } from "elysia";
import type { Config } from "./config";
import type { Database } from "./db/client";
import { bodyParser, type BodyLimit } from "./http/body";
import { createLogger, requestContext, type Logger } from "./http/context";
import { errorHandler, HttpError } from "./http/errors";
import { authentication, Authenticator } from "./http/auth";
import { openapiDocs } from "./http/openapi";
import { adminModule } from "./modules/admin";
import { healthModule } from "./modules/health";
import { usageModule } from "./modules/usage";

export interface AppDeps {
  config: Config;
  database: Database;
  logger?: Logger;
  now?: () => number;
}

/** Limit on request bodies outside utility execution (document create and content update). */
export const MAX_DOCUMENT_BODY_BYTES = 64 * 1024 * 1024;

export function createApp(deps: AppDeps) {
  const { config, database } = deps;
  const logger = deps.logger ?? createLogger(config.logLevel);
  const authenticator = new Authenticator(database.db, deps.now);
  const auth = authentication(authenticator);
  const documentBodyLimit: BodyLimit = {
    bytes: MAX_DOCUMENT_BODY_BYTES,
    tooLarge: (limit) => new HttpError(413, "document_too_large", `The request body exceeds ${limit} bytes`),
  };

  return new Elysia({ normalize: false, name: "kiln" })
    .use(requestContext(logger))
    .use(errorHandler({ logger, authorizeUnknownRoute: (request, path) => authenticator.authorize(request, path, bearerToken(request)) }))
    .use(bodyParser({ limitFor: () => documentBodyLimit, rawRoutes: new Set() }))
    .use(openapiDocs())
    .use(auth)
    .use(healthModule({ database }))
    .use(adminModule({ db: database.db, authenticator }))
    .use(usageModule({ db: database.db, auth }));
}

function bearerToken(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
}

export type App = ReturnType<typeof createApp>;
