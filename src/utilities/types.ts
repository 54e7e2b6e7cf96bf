/**
 * The contract every utility file follows. A utility is pure: no HTTP, no database, no clock or
 * randomness beyond what its config seeds. The engine validates `config` against `configSchema`
 * (defaults filled, unknown fields refused) before `run` sees it.
 */
import type { Static, TObject } from "@sinclair/typebox";

export interface UtilityInputs {
  primary: unknown;
  secondary?: unknown;
}

export interface Utility<S extends TObject = TObject> {
  /** `<category>.<name>`, as in docs/utilities.md */
  id: string;
  /** other ids that reach the same utility (e.g. compare.json-diff) */
  aliases?: readonly string[];
  name: string;
  category: string;
  description: string;
  /** TypeBox object schema with `default`s and `additionalProperties: false` */
  configSchema: S;
  run(inputs: UtilityInputs, config: Static<S>): unknown;
}

/** The input cannot be processed: 400 `utility_failed`, with this message as the detail. */
export class UtilityError extends Error {
  override name = "UtilityError";
}

/**
 * A config value passed the schema but is still unusable (an expression that does not parse, an
 * unknown locale): 400 `validation_failed` naming the field, before anything runs.
 */
export class UtilityConfigError extends Error {
  override name = "UtilityConfigError";
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

export const defineUtility = <S extends TObject>(utility: Utility<S>): Utility<S> => utility;
