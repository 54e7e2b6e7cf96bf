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
 *   UserRegex.replaceAll(text, replacement, grow?)
 *       every (non-overlapping) match replaced; a string replacement is expanded as by
 *       String.prototype.replace (`$1`, `$<name>`, `$&`, `` $` ``, `$'`, `$$`); a function receives
 *       (match, groups) and its result is inserted literally. `grow(added)` learns, before each
 *       expansion is built, how many characters it adds over the match (`$'` repeats the rest of the
 *       text per match, so a short pattern can make a string quadratically longer).
 */
import { RE2JS, RE2JSException } from "re2js";
import { UtilityConfigError } from "../types";

export interface UserRegex {
  test(text: string): boolean;
  matchesWhole(text: string): boolean;
  replaceAll(
    text: string,
    replacement: string | ((match: string, groups: (string | null)[]) => string),
    grow?: (added: number) => void,
  ): string;
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
  const groupNames = pattern.namedGroups();
  return {
    test: (text) => pattern.matcher(text).find(),
    matchesWhole: (text) => pattern.matches(text),
    replaceAll(text, replacement, grow) {
      if (typeof replacement === "string") {
        const expand = expander(replacement, groupCount, groupNames);
        return pattern.matcher(text).replaceAll((match: string, ...rest: unknown[]) => {
          const at = { text, match, offset: rest[groupCount] as number, groups: rest.slice(0, groupCount) as (string | undefined)[] };
          grow?.(expand.length(at) - match.length);
          return expand.build(at);
        });
      }
      // re2js calls the replacer like String.prototype.replace: (match, ...groups, offset, input)
      return pattern
        .matcher(text)
        .replaceAll((match: string, ...rest: unknown[]) => replacement(match, rest.slice(0, groupCount) as (string | null)[]));
    },
  };
}

interface MatchAt {
  text: string;
  match: string;
  offset: number;
  /** undefined: the group took no part in the match */
  groups: (string | undefined)[];
}
/** literal text, or a reference: its length is known before its text is made */
type Piece = string | { length(at: MatchAt): number; text(at: MatchAt): string };

const reference = (text: (at: MatchAt) => string, length = (at: MatchAt) => text(at).length): Piece => ({ text, length });
const MATCH = reference((at) => at.match);
const BEFORE = reference(
  (at) => at.text.slice(0, at.offset),
  (at) => at.offset,
);
const AFTER = reference(
  (at) => at.text.slice(at.offset + at.match.length),
  (at) => at.text.length - at.offset - at.match.length,
);

/**
 * A replacement string parsed once into literal text and references, by the rules re2js applies
 * (ECMAScript GetSubstitution): `$$`, `$&`, `` $` ``, `$'`, `$n`/`$nn` (two digits only when they name
 * a group), `$<name>` only when the pattern has named groups; anything else stays as written. The
 * length of an expansion is known before it is built.
 */
function expander(replacement: string, groupCount: number, groupNames: Record<string, number>) {
  const pieces: Piece[] = [];
  const named = Object.keys(groupNames).length > 0;
  const group = (index: number) => reference((at) => at.groups[index - 1] ?? "");
  let i = 0;
  while (i < replacement.length) {
    const dollar = replacement.indexOf("$", i);
    if (dollar < 0) break;
    if (dollar > i) pieces.push(replacement.slice(i, dollar));
    i = dollar;
    const next = replacement[i + 1] ?? "";
    if (next === "$") {
      pieces.push("$");
      i += 2;
    } else if (next === "&") {
      pieces.push(MATCH);
      i += 2;
    } else if (next === "`") {
      pieces.push(BEFORE);
      i += 2;
    } else if (next === "'") {
      pieces.push(AFTER);
      i += 2;
    } else if (next >= "0" && next <= "9") {
      let index = Number(next);
      let digits = 1;
      const second = replacement[i + 2] ?? "";
      if (second >= "0" && second <= "9" && index * 10 + Number(second) <= groupCount) {
        index = index * 10 + Number(second);
        digits = 2;
      }
      pieces.push(index >= 1 && index <= groupCount ? group(index) : replacement.slice(i, i + 1 + digits));
      i += 1 + digits;
    } else if (next === "<" && named) {
      const close = replacement.indexOf(">", i + 2);
      if (close < 0) {
        pieces.push("$<");
        i += 2;
      } else {
        const name = replacement.slice(i + 2, close);
        pieces.push(Object.hasOwn(groupNames, name) ? group(groupNames[name]!) : "");
        i = close + 1;
      }
    } else {
      pieces.push("$");
      i += 1;
    }
  }
  if (i < replacement.length) pieces.push(replacement.slice(i));
  return {
    length: (at: MatchAt) => pieces.reduce((sum, piece) => sum + (typeof piece === "string" ? piece.length : piece.length(at)), 0),
    build: (at: MatchAt) => pieces.map((piece) => (typeof piece === "string" ? piece : piece.text(at))).join(""),
  };
}
