import { describe, expect, test } from "bun:test";
import { detectDelimiter, parseCsv, stringifyCsv } from "../../../src/utilities/shared/csv";
import { UtilityError } from "../../../src/utilities/types";

const parse = (text: string, options: { delimiter?: string; trim?: boolean; skipEmptyLines?: boolean } = {}) =>
  parseCsv(text, { delimiter: ",", ...options });

describe("parseCsv (RFC 4180)", () => {
  test("quoted cells hold delimiters, doubled quotes and line breaks", () => {
    expect(parse('a,"b,c","say ""hi""","two\nlines","crlf\r\ninside"')).toEqual([["a", "b,c", 'say "hi"', "two\nlines", "crlf\r\ninside"]]);
  });
  test("CRLF and LF both end rows, even mixed; a final line break adds no row", () => {
    expect(parse("a,b\r\n1,2\n3,4\r\n")).toEqual([
      ["a", "b"],
      ["1", "2"],
      ["3", "4"],
    ]);
    expect(parse("a\n")).toEqual([["a"]]);
  });
  test("a leading BOM is ignored, one elsewhere is data", () => {
    expect(parse("\uFEFFa,b\n1,\uFEFF")).toEqual([
      ["a", "b"],
      ["1", "\uFEFF"],
    ]);
    expect(parse("\uFEFF")).toEqual([]);
  });
  test("empty input has no rows; empty cells are kept", () => {
    expect(parse("")).toEqual([]);
    expect(parse(",,")).toEqual([["", "", ""]]);
    expect(parse('""')).toEqual([[""]]);
  });
  test("empty lines are rows of one empty cell unless skipped; a quoted empty cell is not an empty line", () => {
    expect(parse("a\n\nb")).toEqual([["a"], [""], ["b"]]);
    expect(parse("a\n\r\n\nb", { skipEmptyLines: true })).toEqual([["a"], ["b"]]);
    expect(parse('a\n""\nb', { skipEmptyLines: true })).toEqual([["a"], [""], ["b"]]);
  });
  test("trim trims unquoted cells and the space around quotes, never inside them", () => {
    expect(parse(' a , " b " ,c \n', { trim: true })).toEqual([["a", " b ", "c"]]);
    expect(parse(' a , " b " ')).toEqual([[" a ", ' " b " ']]);
    expect(parse("a\n   \nb", { trim: true, skipEmptyLines: true })).toEqual([["a"], ["b"]]);
  });
  test("a tab delimiter is not trimmed away", () => {
    expect(parse("a\t\tb", { delimiter: "\t", trim: true })).toEqual([["a", "", "b"]]);
  });
  test("text after a closing quote is kept; a quote inside an unquoted cell is a character", () => {
    expect(parse('"a"b,c"d')).toEqual([["ab", 'c"d']]);
  });
  test("an unterminated quoted cell is a UtilityError naming its line", () => {
    expect(() => parse('a\nb\n"open,x')).toThrow(UtilityError);
    expect(() => parse('a\nb\n"open,x')).toThrow("line 3");
  });
  test("other delimiters", () => {
    expect(parse('a;"b;c"|d', { delimiter: ";" })).toEqual([["a", "b;c|d"]]);
    expect(parse("a|b", { delimiter: "|" })).toEqual([["a", "b"]]);
  });
});

describe("detectDelimiter", () => {
  test.each([
    ["a,b,c\n1,2,3", ","],
    ["a;b;c\n1;2,5;3", ";"],
    ["a\tb\n1\t2", "\t"],
    ["a|b\n1|2", "|"],
    ['"x;y",b\n"1;2",c', ","],
    ["single", ","],
    ["", ","],
  ])("%j → %j", (text, expected) => {
    expect(detectDelimiter(text)).toBe(expected);
  });
  test("a delimiter on every line beats one that is more frequent but irregular", () => {
    expect(detectDelimiter("a;b,c,d,e\n1;2\n3;4,5")).toBe(";");
  });
});

describe("stringifyCsv", () => {
  const write = (rows: string[][], delimiter = ",", lineEnding: "\n" | "\r\n" = "\n") => stringifyCsv(rows, { delimiter, lineEnding });
  test("cells with the delimiter, a quote, CR or LF are quoted, quotes doubled; others are not", () => {
    expect(write([["plain", "a,b", 'q"q', "cr\r", "lf\n", " spaced "]])).toBe('plain,"a,b","q""q","cr\r","lf\n", spaced ');
  });
  test("only the configured delimiter forces quotes", () => {
    expect(write([["a,b", "c;d"]], ";")).toBe('a,b;"c;d"');
  });
  test("rows are joined by the line ending, with no final line break", () => {
    expect(write([["a"], ["b"]], ",", "\r\n")).toBe("a\r\nb");
    expect(write([])).toBe("");
  });
  test('a row of one empty cell is written as "" so that it reads back as a row', () => {
    expect(write([["a"], [""], ["b"]])).toBe('a\n""\nb');
    expect(parse(write([["a"], [""], ["b"]]), { skipEmptyLines: true })).toEqual([["a"], [""], ["b"]]);
  });
  test("a cell starting with a BOM is quoted so that it survives reading", () => {
    expect(parse(write([["\uFEFFa", "b"]]))).toEqual([["\uFEFFa", "b"]]);
  });
});
