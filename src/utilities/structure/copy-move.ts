/**
 * structure.copy-move: copies or moves values inside each record, operations applied in order.
 *
 * Decided: `from` may hold wildcards; each wildcard of `to` (at most as many as `from` has) takes the
 * concrete key matched by the wildcard of `from` at the same position, so `items.*.price` →
 * `items.*.cost` works per element. Missing parents of `to` are created as objects; a `to` that runs
 * through a string, number or boolean is a 400. A move whose `to` is kept (overwrite false, existing
 * value) leaves its `from` in place, so nothing is lost.
 *
 * Output bound: none by construction (each copy of the record's root doubles it), so every copy is
 * charged to the budget before it is made, and so are the nulls that pad an array written past its end.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { type OutputBudget, unlimitedBudget } from "../budget";
import {
  ANY,
  exists,
  getAll,
  type Path,
  type PathKey,
  PathSet,
  parsePathField,
  remove,
  removeAll,
  type Segment,
  set,
} from "../shared/paths";
import { cloneJson, type Defaulted, mapRecords, objectRecord } from "../shared/records";
import { defineUtility, UtilityConfigError, type UtilityInputs } from "../types";

export const id = "structure.copy-move";

export const configSchema = t.Object(
  {
    operations: t.Array(
      t.Object(
        {
          from: t.String({ description: "path to read" }),
          to: t.String({ description: "path to write" }),
          action: t.Optional(t.Union([t.Literal("copy"), t.Literal("move")], { default: "copy" })),
        },
        { additionalProperties: false },
      ),
      { description: "applied in order" },
    ),
    overwrite: t.Optional(t.Boolean({ default: true, description: "false: an existing `to` value is kept" })),
  },
  { additionalProperties: false },
);

export type CopyMoveConfig = Defaulted<Static<typeof configSchema>, "overwrite">;
type Operation = CopyMoveConfig["operations"][number];

interface CompiledOperation {
  from: Path;
  fromSet: PathSet;
  to: Path;
  move: boolean;
  wildcardPositions: number[];
}

function compile(operations: Operation[]): CompiledOperation[] {
  return operations.map((operation, index) => {
    const from = parsePathField(operation.from, `operations/${index}/from`);
    const to = parsePathField(operation.to, `operations/${index}/to`);
    const wildcardPositions = from.flatMap((segment, position) => (segment === ANY ? [position] : []));
    if (to.length === 0) throw new UtilityConfigError(`operations/${index}/to`, "cannot write to the record itself");
    if (operation.action === "move" && from.length === 0)
      throw new UtilityConfigError(`operations/${index}/from`, "the record itself cannot be moved");
    if (to.filter((segment) => segment === ANY).length > wildcardPositions.length) {
      throw new UtilityConfigError(`operations/${index}/to`, "`to` has more wildcards than `from`");
    }
    return { from, fromSet: new PathSet([from]), to, move: operation.action === "move", wildcardPositions };
  });
}

/** `to` with its n-th wildcard replaced by the key that `from`'s n-th wildcard matched. */
function destination(operation: CompiledOperation, matched: PathKey[]): Segment[] {
  let wildcard = 0;
  return operation.to.map((segment) => (segment === ANY ? String(matched[operation.wildcardPositions[wildcard++]!]) : segment));
}

function apply(record: unknown, operation: CompiledOperation, overwrite: boolean, budget: OutputBudget): void {
  const matches = getAll(record, operation.from);
  // a copy of the record's root doubles it: charged before it is made (a move only relocates)
  const writes = matches
    .map((match) => ({
      source: match.path,
      to: destination(operation, match.path),
      value: cloneJson(match.value, operation.move ? undefined : budget),
    }))
    .filter((write) => overwrite || !exists(record, write.to));
  // sources go before the writes, so that a move into its own subtree works
  if (operation.move) {
    if (writes.length === matches.length) removeAll(record, operation.fromSet);
    // last first, so that the array indexes of the earlier sources still hold
    else for (const write of [...writes].reverse()) remove(record, write.source.map(String));
  }
  for (const write of writes) set(record, write.to, write.value, budget);
}

export function copyMove(primary: unknown, config: CopyMoveConfig, budget = unlimitedBudget()): unknown {
  const operations = compile(config.operations);
  return mapRecords(primary, (record, index) => {
    const copy = cloneJson(objectRecord(record, index, id));
    for (const operation of operations) apply(copy, operation, config.overwrite, budget);
    return copy;
  });
}

export default defineUtility({
  id,
  name: "Copy / Move",
  category: "structure",
  description: "Copies or moves values between paths of each record, in order.",
  configSchema,
  amplifies: true,
  run: (inputs: UtilityInputs, config, budget) => copyMove(inputs.primary, config as CopyMoveConfig, budget),
});
