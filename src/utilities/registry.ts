/**
 * id → utility. Every id of docs/utilities.md is here (plus aliases such as compare.json-diff); the engine,
 * the catalogue and the workers all read this one table, so a utility is written once.
 */
import type { Static } from "@sinclair/typebox";
import aggregate from "./analysis/aggregate";
import diff from "./analysis/diff";
import summarize from "./analysis/summarize";
import formatValues from "./cleanup/format-values";
import mapValues from "./cleanup/map-values";
import redact from "./cleanup/redact";
import addLocalization from "./convert/add-localization";
import csvToJson from "./convert/csv-to-json";
import jsonToCsv from "./convert/json-to-csv";
import filter from "./generate/filter";
import generateMockData from "./generate/generate-mock-data";
import deepMerge from "./merge/deep-merge";
import cleanJson from "./schema/clean-json";
import compute from "./schema/compute";
import normalize from "./schema/normalize";
import truncate from "./schema/truncate";
import copyMove from "./structure/copy-move";
import findReplace from "./structure/find-replace";
import flattenNest from "./structure/flatten-nest";
import pickFields from "./structure/pick-fields";
import removeFields from "./structure/remove-fields";
import restructure from "./structure/restructure";
import type { Utility } from "./types";

export const UTILITIES = [
  csvToJson,
  jsonToCsv,
  addLocalization,
  findReplace,
  deepMerge,
  flattenNest,
  restructure,
  pickFields,
  removeFields,
  copyMove,
  normalize,
  cleanJson,
  truncate,
  compute,
  aggregate,
  summarize,
  diff,
  formatValues,
  redact,
  mapValues,
  generateMockData,
  filter,
] as const satisfies readonly Utility[];

type Registered = (typeof UTILITIES)[number];

/** The id of a utility of the table (not its aliases). */
export type UtilityId = Registered["id"];

/**
 * The config a client sends to utility `Id`, typed by that utility's schema: each field may be left
 * out (the ones with a default take it; a field without one is then refused with 400 naming it).
 */
export type UtilityConfig<Id extends UtilityId> = Partial<Static<Extract<Registered, { id: Id }>["configSchema"]>>;

/**
 * A set of utilities the engine can run. `module` is the URL of a module exporting it as `registry`, so
 * that a worker thread imports the very same set (tests inject their own through it).
 */
export interface UtilityRegistry {
  readonly module: string;
  readonly utilities: readonly Utility[];
  find(id: string): Utility | undefined;
}

export function createRegistry(module: string, utilities: readonly Utility[]): UtilityRegistry {
  const byId = new Map<string, Utility>();
  for (const utility of utilities) {
    for (const id of [utility.id, ...(utility.aliases ?? [])]) byId.set(id, utility);
  }
  return { module, utilities, find: (id) => byId.get(id) };
}

export const registry = createRegistry(import.meta.url, UTILITIES);

export function findUtility(id: string): Utility | undefined {
  return registry.find(id);
}
