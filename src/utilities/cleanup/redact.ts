/**
 * cleanup.redact: masks sensitive values inside strings (detectors and custom patterns), and whole
 * values by path or by member name. Keys are never changed; text around a match is kept.
 *
 * Output bound: none by construction (a long mask in place of each one-character match of a custom
 * pattern), so what each mask adds over what it replaces is charged to the budget.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { RE2JS } from "re2js";
import { unlimitedBudget } from "../budget";
import { DETECTOR_PRIORITY, DETECTORS, detect, PATTERN_NAMES, type Span } from "../shared/detectors";
import { isObject, type JsonObject, PathSet, type PathState, parsePaths, setOwn } from "../shared/paths";
import { compileUserRegex } from "../shared/regex";
import { defineUtility, type UtilityInputs } from "../types";

export const id = "cleanup.redact";

export const configSchema = t.Object(
  {
    patterns: t.Array(t.Union(PATTERN_NAMES.map((name) => t.Literal(name))), {
      default: ["email", "phone"],
      uniqueItems: true,
      description: "detectors to apply inside strings (credit cards must pass the Luhn check, IBANs mod-97)",
    }),
    customPatterns: t.Array(t.String({ minLength: 1 }), {
      default: [],
      maxItems: 50,
      description: "extra regular expressions (RE2 syntax, linear time)",
    }),
    paths: t.Array(t.String(), { default: [], description: "values at these paths are masked whole" }),
    keys: t.Array(t.String({ minLength: 1 }), {
      default: [],
      description: "members with these names (any depth, case-insensitive) are masked whole",
    }),
    maskStyle: t.Union([t.Literal("full"), t.Literal("partial"), t.Literal("hash")], { default: "full" }),
    mask: t.String({ default: "[REDACTED]", description: "the replacement under maskStyle full" }),
  },
  { additionalProperties: false },
);

export type RedactConfig = Static<typeof configSchema>;

/** `sha256:` + 12 hex digits. Bun's hashers work in worker threads too; the one-shot form is the fastest. */
export function hashToken(text: string): string {
  return `sha256:${Bun.SHA256.hash(text, "hex").slice(0, 12)}`;
}

interface Finder {
  find(text: string): Span[];
  partial(value: string): string;
}

const customPartial = (value: string) => `${String.fromCodePoint(value.codePointAt(0)!)}***`;

function customFinder(pattern: string, index: number): Finder {
  compileUserRegex(pattern, { field: `customPatterns/${index}` }); // names the field when the pattern is invalid
  const compiled = RE2JS.compile(pattern);
  return {
    find(text) {
      const spans: Span[] = [];
      const matcher = compiled.matcher(text);
      while (matcher.find()) if (matcher.end() > matcher.start()) spans.push({ start: matcher.start(), end: matcher.end() });
      return spans;
    },
    partial: customPartial,
  };
}

export function redact(primary: unknown, config: RedactConfig, budget = unlimitedBudget()): unknown {
  const finders: Finder[] = [
    ...DETECTOR_PRIORITY.filter((name) => config.patterns.includes(name)).map((name) => ({
      find: (text: string) => detect(name, text),
      partial: DETECTORS[name].partial,
    })),
    ...config.customPatterns.map(customFinder),
  ];
  const pathSet = new PathSet(parsePaths(config.paths, "paths"));
  const maskedKeys = new Set(config.keys.map((key) => key.toLowerCase()));
  const hashes = new Map<string, string>();
  const hashed = (text: string) => {
    let token = hashes.get(text);
    if (token === undefined) hashes.set(text, (token = hashToken(text)));
    return token;
  };

  const charged = (mask: string, replacedLength: number) => {
    if (mask.length > replacedLength) budget.charge(mask.length - replacedLength);
    return mask;
  };
  const maskMatch = (value: string, finder: Finder) =>
    charged(config.maskStyle === "full" ? config.mask : config.maskStyle === "hash" ? hashed(value) : finder.partial(value), value.length);
  // a whole value has no kind to keep a hint of, so `partial` masks it like `full`
  const maskWhole = (value: unknown) =>
    charged(config.maskStyle === "hash" ? hashed(typeof value === "string" ? value : JSON.stringify(value)) : config.mask, 0);

  const redactText = (text: string): string => {
    // finders in priority order; a span that overlaps one already taken is dropped. Both lists are
    // sorted by start, so one merge per finder decides it (a check against every taken span made
    // 100,000 one-character matches take seconds)
    let taken: (Span & { finder: Finder })[] = [];
    for (const finder of finders) {
      const merged: (Span & { finder: Finder })[] = [];
      let i = 0;
      for (const span of finder.find(text).sort((a, b) => a.start - b.start)) {
        while (i < taken.length && taken[i].end <= span.start) merged.push(taken[i++]);
        const overlapsNext = i < taken.length && taken[i].start < span.end;
        const overlapsLast = merged.length > 0 && merged[merged.length - 1].end > span.start;
        if (!overlapsNext && !overlapsLast) merged.push({ ...span, finder });
      }
      while (i < taken.length) merged.push(taken[i++]);
      taken = merged;
    }
    if (taken.length === 0) return text;
    let out = "";
    let position = 0;
    for (const span of taken) {
      out += text.slice(position, span.start) + maskMatch(text.slice(span.start, span.end), span.finder);
      position = span.end;
    }
    return out + text.slice(position);
  };

  const walk = (value: unknown, state: PathState, selected: boolean): unknown => {
    if (selected) return maskWhole(value);
    if (typeof value === "string") return redactText(value);
    if (Array.isArray(value)) return value.map((element, index) => step(element, state, index, false));
    if (isObject(value)) {
      const out: JsonObject = {};
      for (const key of Object.keys(value)) setOwn(out, key, step(value[key], state, key, maskedKeys.has(key.toLowerCase())));
      return out;
    }
    return value;
  };
  const step = (value: unknown, state: PathState, key: string | number, keyMatches: boolean) => {
    const next = state.length > 0 ? PathSet.step(state, key) : state;
    return walk(value, next, keyMatches || PathSet.selected(next));
  };

  return walk(primary, pathSet.start, PathSet.selected(pathSet.start));
}

export default defineUtility({
  id,
  name: "Redact",
  category: "cleanup",
  description:
    "Masks e-mail addresses, phone numbers, card numbers, IBANs, IP addresses, SSNs, URLs and custom patterns inside strings, and whole values by path or member name.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return redact(inputs.primary, config, budget);
  },
});
