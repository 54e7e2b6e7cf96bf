/**
 * User-supplied regular expressions on a linear-time engine (re2js: RE2 semantics, no backreferences
 * or lookaround), so that no pattern can stall the server: `(a+)+$` on a long input runs in linear time.
 *
 * API (stable; other utilities import it):
 *   compileUserRegex(pattern, { field, caseInsensitive? }) → UserRegex
 *       an invalid pattern is a UtilityConfigError at `field` (e.g. "search", "customPatterns/0")
 *   literalRegex(text, { caseInsensitive?, whole? }) → UserRegex
 *       matches `text` literally (with `whole`, only a string that is exactly `text`)
 *   UserRegex.test(text)              true when the pattern occurs anywhere in `text`
 *   UserRegex.matchesWhole(text)      true when the pattern matches all of `text`
 *   UserRegex.replaceAll(text, replacement)
 *       every (non-overlapping) match replaced; a string replacement understands `$1`, `${name}` and
 *       `$$`; a function receives (match, groups) and its result is inserted literally
 */
import { RE2JS, RE2JSException } from "re2js";
import { UtilityConfigError } from "../types";

export interface UserRegex {
  test(text: string): boolean;
  matchesWhole(text: string): boolean;
  replaceAll(text: string, replacement: string | ((match: string, groups: (string | null)[]) => string)): string;
}

export function compileUserRegex(pattern: string, options: { field: string; caseInsensitive?: boolean }): UserRegex {
  try {
    return wrap(RE2JS.compile(pattern, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0));
  } catch (error) {
    if (error instanceof RE2JSException) {
      throw new UtilityConfigError(options.field, `not a valid regular expression (RE2 syntax): ${error.message}`);
    }
    throw error;
  }
}

export function literalRegex(text: string, options: { caseInsensitive?: boolean; whole?: boolean } = {}): UserRegex {
  const quoted = RE2JS.quote(text);
  return wrap(RE2JS.compile(options.whole ? `^${quoted}$` : quoted, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0));
}

function wrap(pattern: RE2JS): UserRegex {
  const groupCount = pattern.groupCount();
  return {
    test: (text) => pattern.matcher(text).find(),
    matchesWhole: (text) => pattern.matches(text),
    replaceAll(text, replacement) {
      if (typeof replacement === "string") return pattern.matcher(text).replaceAll(replacement);
      // re2js calls the replacer like String.prototype.replace: (match, ...groups, offset, input)
      return pattern.matcher(text).replaceAll((match: string, ...rest: unknown[]) =>
        replacement(match, rest.slice(0, groupCount) as (string | null)[]));
    },
  };
}
