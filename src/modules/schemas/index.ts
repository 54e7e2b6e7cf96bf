/**
 * JSON Schemas for folders (permission `documents`, extensions.md §8): the schemas, the dry run and the
 * audit. The check of every content write is the SchemaGuard of validation.ts, which app.ts gives the
 * documents module.
 */
import { Elysia } from "elysia";
import { checkRoutes } from "./routes/checks";
import type { SchemaRoutesDeps } from "./routes/common";
import { schemaRoutes } from "./routes/schemas";

export const schemasModule = (deps: SchemaRoutesDeps) =>
  new Elysia({ name: "kiln.schemas" }).use(schemaRoutes(deps)).use(checkRoutes(deps));
