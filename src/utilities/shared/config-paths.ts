/**
 * One path taken from a config field (a compute target, a filter's `path`, a `where` field, a
 * groupBy entry): a syntax error becomes a UtilityConfigError naming exactly that field, and `single`
 * refuses paths that name no single member (a wildcard or the root), for paths that are written to.
 */

import { UtilityConfigError } from "../types";
import { ANY, type Path, PathSyntaxError, parsePath } from "./paths";

export function parseConfigPath(source: string, field: string, options: { single?: boolean } = {}): Path {
  let path: Path;
  try {
    path = parsePath(source);
  } catch (error) {
    if (error instanceof PathSyntaxError) throw new UtilityConfigError(field, error.message);
    throw error;
  }
  if (options.single && (path.length === 0 || path.includes(ANY))) {
    throw new UtilityConfigError(field, `'${source}' must name one member (no wildcard, not the root)`);
  }
  return path;
}
