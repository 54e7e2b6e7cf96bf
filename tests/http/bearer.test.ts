/**
 * bearerToken reads the Authorization header on every request without a regular expression; it must
 * read every header as the pattern of RFC 9110 §11.1 it replaced did: `bearer` in any case, one or more
 * spaces, the rest trimmed, nothing for anything else.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { bearerToken } from "../../src/http/bearer";

const BEARER = /^bearer +(.*)$/i;
const byPattern = (header: string) => BEARER.exec(header)?.[1]?.trim() || undefined;

test("examples: any case of the scheme, spaces around the token, other schemes and bare tokens refused", () => {
  expect(bearerToken("Bearer kiln_abc")).toBe("kiln_abc");
  expect(bearerToken("bEaReR    kiln_abc  ")).toBe("kiln_abc");
  expect(bearerToken("Bearer")).toBeUndefined();
  expect(bearerToken("Bearer    ")).toBeUndefined();
  expect(bearerToken("Bearer\tkiln_abc")).toBeUndefined();
  expect(bearerToken("Basic a2lsbg==")).toBeUndefined();
  expect(bearerToken("Bearerkiln_abc")).toBeUndefined();
  expect(bearerToken("kiln_abc")).toBeUndefined();
  expect(bearerToken(null)).toBeUndefined();
});

test("any header value reads as the pattern reads it", () => {
  const piece = fc.constantFrom("bearer", "Bearer", "BEARER", "beare", "bearer\t", " ", "  ", "\t", "kiln_x", "a b", "é", "=", "");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 5 }), (pieces) => {
      const header = pieces.join("");
      expect(bearerToken(header)).toBe(byPattern(header));
    }),
    { numRuns: 2000 },
  );
});
