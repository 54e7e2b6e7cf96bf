/**
 * What the engine does to `config` before `run` (types.ts): defaults filled, then the schema checked.
 * Unit tests build their configs through it, so the documented defaults are the schema's own.
 */
import type { TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { UtilityConfigError } from "../../../src/utilities/types";

/** The filled config, typed as the utility function's own config type (its defaulted fields present). */
export function configure<C = any>(schema: TObject, config: Record<string, unknown> = {}): C {
  const filled = Value.Default(schema, Value.Clone(config));
  const errors = [...Value.Errors(schema, filled)].map((error) => `${error.path || "/"}: ${error.message}`);
  if (errors.length > 0) throw new Error(`invalid config: ${errors.join("; ")}`);
  return filled as C;
}

/** The schema's verdict on a config, for tests of types, enums and ranges. */
export function configErrors(schema: TObject, config: Record<string, unknown>): string[] {
  const filled = Value.Default(schema, Value.Clone(config));
  return [...new Set([...Value.Errors(schema, filled)].map((error) => error.path || "/"))];
}

/** The config path a UtilityConfigError names (with its message), or what happened instead. */
export function configErrorOf(run: () => unknown): { path: string; message: string } | string {
  try {
    run();
  } catch (error) {
    return error instanceof UtilityConfigError ? { path: error.path, message: error.message } : String(error);
  }
  return "no error";
}
