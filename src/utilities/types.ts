/**
 * The contract every utility file follows. A utility is pure: no HTTP, no database, no clock or
 * randomness beyond what its config seeds. The engine validates `config` against `configSchema`
 * (defaults filled, unknown fields refused) before `run` sees it.
 */
import type { Static, TObject } from "@sinclair/typebox";
import type { OutputBudget } from "./budget";

export interface UtilityInputs {
  primary: unknown;
  secondary?: unknown;
}

/**
 * `run` and `recordWise` are method signatures, not function-typed properties, on purpose: TypeScript
 * checks a method's parameters bivariantly, so every `Utility<S>` is a `Utility` (= `Utility<TObject>`)
 * and the registry lists them without a cast. The compiler does not prove that such a `Utility` is only
 * called with its own config; the engine's contract above does: it passes `run` and `recordWise` only a
 * config that this utility's `configSchema` accepted, i.e. a `Static<S>`.
 */
export interface Utility<S extends TObject = TObject> {
  /** `<category>.<name>`, as in docs/utilities.md */
  id: string;
  /** other ids that reach the same utility (e.g. compare.json-diff) */
  aliases?: readonly string[];
  name: string;
  category: string;
  description: string;
  /**
   * The output can be larger than a small constant times the input (copies, repetitions, generated
   * records): such a run never goes inline on the main thread, whatever its size, and charges its budget.
   */
  amplifies?: boolean;
  /** TypeBox object schema with `default`s and `additionalProperties: false` */
  configSchema: S;
  /**
   * `budget` (the engine always passes one): a utility whose output can outgrow its input charges what it builds there as it builds
   * it (budget.ts); one whose output is bounded by its input says so, with the bound, in its comment.
   */
  run(inputs: UtilityInputs, config: Static<S>, budget?: OutputBudget): unknown;
  /**
   * For record-wise utilities whose records do not depend on each other: the function `run` applies to
   * each element of an array `primary`, for this config (undefined when the config needs the whole
   * input). The engine then streams a large array element by element (src/engine/streaming.ts).
   */
  recordWise?(config: Static<S>, budget?: OutputBudget): ((record: unknown, index: number) => unknown) | undefined;
  /**
   * A faster path over the primary input's JSON text, for a run of this utility alone on it: given the
   * text (valid UTF-8, not nested too deep: the engine checks) and where the input's value starts in it,
   * the output as UTF-8, byte for byte what `run` and JSON.stringify give, and where the value ends; or
   * undefined for the engine to take the usual path, which then gives its usual answer or error (so this
   * path may leave any input to it, invalid JSON included, but must never answer one).
   */
  runOnText?(config: Static<S>, text: Uint8Array, start: number): { output: Uint8Array; end: number } | undefined;
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
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Types `run`'s and `recordWise`'s config from the schema: a utility file declares its config type as
 * `Static<typeof configSchema>`, never by hand. The id keeps its literal type, so that the registry's
 * table types each utility's config by its id (registry.ts, UtilityConfig).
 */
export const defineUtility = <S extends TObject, const Id extends string>(utility: Utility<S> & { id: Id }): Utility<S> & { id: Id } =>
  utility;
