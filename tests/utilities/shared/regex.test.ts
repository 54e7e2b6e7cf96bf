import { describe, expect, test } from "bun:test";
import { compileUserRegex, literalRegex } from "../../../src/utilities/shared/regex";
import { UtilityConfigError } from "../../../src/utilities/types";
import { configErrorOf } from "./configure";

describe("user regular expressions", () => {
  test("replaceAll with $1 groups, case-insensitive flag", () => {
    const re = compileUserRegex("(\\w+)@(\\w+)", { field: "search" });
    expect(re.replaceAll("a@b and c@d", "$2 at $1")).toBe("b at a and d at c");
    expect(compileUserRegex("abc", { field: "search", caseInsensitive: true }).replaceAll("ABC abc", "x")).toBe("x x");
    expect(compileUserRegex("abc", { field: "search" }).replaceAll("ABC abc", "x")).toBe("ABC x");
  });

  test("function replacement gets the match and groups; its result is literal", () => {
    const re = compileUserRegex("(a)(b)?", { field: "search" });
    expect(re.replaceAll("ab a", (match, groups) => `[${match}|${groups.join(",")}|$1]`)).toBe("[ab|a,b|$1] [a|a,|$1]");
  });

  test("test and matchesWhole", () => {
    const re = compileUserRegex("\\d+", { field: "search" });
    expect(re.test("ab12")).toBe(true);
    expect(re.matchesWhole("ab12")).toBe(false);
    expect(re.matchesWhole("12")).toBe(true);
  });

  test("literal patterns treat metacharacters as text", () => {
    expect(literalRegex("a.b*").replaceAll("a.b* axbb", "X")).toBe("X axbb");
    expect(literalRegex("A.B", { caseInsensitive: true }).replaceAll("a.b axb", "x")).toBe("x axb");
  });

  test("an invalid pattern is a UtilityConfigError naming the field", () => {
    expect(configErrorOf(() => compileUserRegex("(a", { field: "customPatterns/2" }))).toEqual({
      path: "customPatterns/2",
      message: "not a valid regular expression (RE2 syntax): error parsing regexp: missing closing ): `(a`",
    });
    expect(() => compileUserRegex("(?<=a)b", { field: "search" })).toThrow(UtilityConfigError);
  });

  test("catastrophic patterns on a linear-time engine return (the answer is what is checked)", () => {
    const re = compileUserRegex("(a+)+$", { field: "search" });
    const input = "a".repeat(50_000) + "!";
    expect(re.test(input)).toBe(false);
    expect(re.replaceAll("aaa", "x")).toBe("x");
  });
});
