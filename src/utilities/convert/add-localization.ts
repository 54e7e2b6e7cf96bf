/**
 * convert.add-localization: turns texts into a localization structure, record-wise. One walk per
 * record; `paths` are compiled into a PathSet so that selection is decided member by member.
 *
 * Output bound: none small by construction: every text becomes one entry per locale (a thousand
 * locales, or the text copied into each with fill "source"), so each entry made is charged to the
 * budget by its key and value as it is made.
 */

import type { Static } from "@sinclair/typebox";
import { Type as t } from "@sinclair/typebox";
import { unlimitedBudget } from "../budget";
import { hasOwn, isObject, type JsonObject, PathSet, type PathState, parsePaths, setOwn } from "../shared/paths";
import { describeType, mapRecords } from "../shared/records";
import { defineUtility, UtilityConfigError, UtilityError, type UtilityInputs } from "../types";

export const id = "convert.add-localization";

export const configSchema = t.Object(
  {
    locales: t.Array(t.String(), {
      minItems: 1,
      default: ["en"],
      description: "BCP 47 tags, validated and canonicalised (en-us → en-US)",
    }),
    sourceLocale: t.Optional(t.String({ description: "the language the texts are written in; default: the first of locales" })),
    paths: t.Optional(t.Array(t.String(), { description: "which texts to localize; default: every string value" })),
    mode: t.Union([t.Literal("wrap"), t.Literal("suffix")], {
      default: "wrap",
      description: 'wrap: "Save" → { "en": "Save", "fr": "" }; suffix: sibling keys title_en, title_fr',
    }),
    fill: t.Union([t.Literal("empty"), t.Literal("source"), t.Literal("null")], {
      default: "empty",
      description: 'what the other locales get: "", a copy of the source text, or null',
    }),
  },
  { additionalProperties: false },
);
export type AddLocalizationConfig = Static<typeof configSchema>;

function canonicalLocale(tag: string, field: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    if (canonical) return canonical;
  } catch {
    // RangeError: not a well-formed tag
  }
  throw new UtilityConfigError(field, `'${tag}' is not a valid BCP 47 language tag (e.g. en, en-US, pt-BR)`);
}

/** A key that reads as a locale tag: a 2–3 letter language, optional subtags, well-formed. */
const LOCALE_LIKE = /^[a-z]{2,3}(?:[-_][a-z0-9]{1,8})*$/i;
function localeOf(key: string): string | null {
  if (!LOCALE_LIKE.test(key)) return null;
  try {
    return Intl.getCanonicalLocales(key.replaceAll("_", "-"))[0] ?? null;
  } catch {
    return null;
  }
}

export interface Localization {
  /** canonical, without repeats; the source locale is among them */
  locales: string[];
  source: string;
  paths: PathSet | null;
  mode: "wrap" | "suffix";
  fill: "empty" | "source" | "null";
}

/** The config checked and canonicalised; the source locale joins `locales` (first) when not listed. */
export function resolveLocalization(config: AddLocalizationConfig): Localization {
  const locales = [...new Set(config.locales.map((tag, index) => canonicalLocale(tag, `locales/${index}`)))];
  const source = config.sourceLocale === undefined ? locales[0] : canonicalLocale(config.sourceLocale, "sourceLocale");
  if (!locales.includes(source)) locales.unshift(source);
  const paths = config.paths === undefined ? null : new PathSet(parsePaths(config.paths, "paths"));
  return { locales, source, paths, mode: config.mode, fill: config.fill };
}

export function localize(record: unknown, options: Localization, budget = unlimitedBudget()): unknown {
  const { locales, source, mode } = options;
  const known = new Set(locales);
  const fillFor = (text: string | null): string | null => (options.fill === "empty" ? "" : options.fill === "null" ? null : (text ?? ""));
  /** sets a member the input did not have, charged first */
  const add = (out: JsonObject, key: string, value: string | null) => {
    budget.charge(key.length + 4 + (value === null ? 4 : value.length + 2));
    setOwn(out, key, value);
  };

  const wrap = (text: string): JsonObject => {
    const out: JsonObject = {};
    for (const locale of locales) add(out, locale, locale === source ? text : fillFor(text));
    return out;
  };

  /**
   * Already wrapped: every key reads as a locale tag, at least one of them is a configured locale
   * (so that `{ "id": "x" }` is still a text to wrap), and every value is a text or null.
   */
  const wrappedLocales = (object: JsonObject): Set<string> | null => {
    const present = new Set<string>();
    let configured = false;
    for (const key of Object.keys(object)) {
      const locale = localeOf(key);
      const value = object[key];
      if (locale === null || (typeof value !== "string" && value !== null)) return null;
      present.add(locale);
      configured ||= known.has(locale);
    }
    return configured ? present : null;
  };
  const complete = (object: JsonObject, present: Set<string>): JsonObject => {
    const sourceKey = Object.keys(object).find((key) => localeOf(key) === source);
    const sourceText = sourceKey === undefined ? null : (object[sourceKey] as string | null);
    const out: JsonObject = { ...object };
    for (const locale of locales) if (!present.has(locale)) add(out, locale, fillFor(sourceText));
    return out;
  };

  /** `title_fr` → { base: "title", locale: "fr" } when fr is configured */
  const suffixed = (key: string): { base: string; locale: string } | null => {
    for (const locale of locales) {
      if (key.length > locale.length + 1 && key.endsWith(`_${locale}`)) return { base: key.slice(0, -locale.length - 1), locale };
    }
    return null;
  };
  /** suffix mode: the text of member `key` becomes sibling members `key_<locale>` */
  const addSuffixed = (out: JsonObject, object: JsonObject, key: string, text: string) => {
    const already = suffixed(key);
    if (already) {
      // localized before: keep it, and from the source text give the missing locales
      setOwn(out, key, text);
      if (already.locale !== source) return;
      for (const locale of locales) {
        const sibling = `${already.base}_${locale}`;
        if (!hasOwn(object, sibling)) add(out, sibling, fillFor(text));
      }
      return;
    }
    // `title` beside an existing `title_en`: the localized member stands, this one is left alone
    if (hasOwn(object, `${key}_${source}`)) {
      setOwn(out, key, text);
      return;
    }
    for (const locale of locales) {
      const sibling = `${key}_${locale}`;
      if (!hasOwn(object, sibling)) add(out, sibling, locale === source ? text : fillFor(text));
    }
  };

  const childOf = (state: PathState | null, key: string | number) => {
    if (state === null) return { selected: true, state: null };
    const next = PathSet.step(state, key);
    return { selected: PathSet.selected(next), state: PathSet.selected(next) ? null : next };
  };

  // `selected`: on or below a configured path (always, without paths); `state`: where the paths are, while not yet selected
  const walk = (value: unknown, selected: boolean, state: PathState | null): unknown => {
    if (!selected && state !== null && state.length === 0) return value; // no path leads inside
    if (typeof value === "string") return selected && mode === "wrap" ? wrap(value) : value;
    if (Array.isArray(value)) {
      return value.map((element, index) => {
        const child = childOf(state, index);
        // suffix mode: a text inside an array has no key to suffix, so it stays as it is
        return walk(element, child.selected, child.state);
      });
    }
    if (!isObject(value)) return value;
    if (selected) {
      const present = wrappedLocales(value);
      if (present) return complete(value, present);
    }
    const out: JsonObject = {};
    for (const key of Object.keys(value)) {
      const member = value[key];
      let child = childOf(state, key);
      if (mode === "suffix" && typeof member === "string") {
        // `title_en` is selected by the path `title` that produced it
        const already = child.selected ? null : suffixed(key);
        if (already) child = childOf(state, already.base);
        if (child.selected) {
          addSuffixed(out, value, key, member);
          continue;
        }
      }
      setOwn(out, key, walk(member, child.selected, child.state));
    }
    return out;
  };

  const start = options.paths?.start ?? null;
  return walk(record, start === null || PathSet.selected(start), start === null || PathSet.selected(start) ? null : start);
}

export default defineUtility({
  id,
  name: "Add localization",
  category: "convert",
  description:
    'Turns texts into a localization structure: "Save" becomes { "en": "Save", "fr": "" } (wrap) or title becomes title_en, title_fr (suffix). Record-wise; running it twice changes nothing.',
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    const { primary } = inputs;
    if (primary === null || (typeof primary !== "object" && typeof primary !== "string")) {
      throw new UtilityError(`${id} takes texts: an object, an array or a string; primary is ${describeType(primary)}`);
    }
    const options = resolveLocalization(config);
    return mapRecords(primary, (record) => localize(record, options, budget));
  },
});
