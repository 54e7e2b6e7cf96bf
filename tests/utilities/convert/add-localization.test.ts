import { describe, expect, test } from "bun:test";
import utility, { configSchema } from "../../../src/utilities/convert/add-localization";
import { UtilityConfigError, UtilityError } from "../../../src/utilities/types";
import { configErrors, configure } from "../shared/configure";

const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configure(configSchema, config));

function configError(action: () => unknown): UtilityConfigError {
  try {
    action();
  } catch (error) {
    if (error instanceof UtilityConfigError) return error;
    throw error;
  }
  throw new Error("no UtilityConfigError");
}

describe("config", () => {
  test("defaults: locales [en], wrap, fill empty; sourceLocale and paths absent", () => {
    expect(configure(configSchema)).toEqual({ locales: ["en"], mode: "wrap", fill: "empty" });
  });
  test("types, enums, ranges and unknown fields are checked", () => {
    expect(configErrors(configSchema, { locales: [] })).toEqual(["/locales"]);
    expect(configErrors(configSchema, { locales: "en" })).toContain("/locales");
    expect(configErrors(configSchema, { sourceLocale: 1 })).toEqual(["/sourceLocale"]);
    expect(configErrors(configSchema, { paths: "title" })).toContain("/paths");
    expect(configErrors(configSchema, { mode: "nest" })).toContain("/mode");
    expect(configErrors(configSchema, { fill: "copy" })).toContain("/fill");
    expect(configErrors(configSchema, { target: "fr" })).toContain("/target");
  });
  test("an invalid locale tag is a UtilityConfigError naming the field", () => {
    expect(configError(() => run({ a: "x" }, { locales: ["en", "not a tag"] })).path).toBe("locales/1");
    expect(configError(() => run({ a: "x" }, { locales: ["en", ""] })).path).toBe("locales/1");
    expect(configError(() => run({ a: "x" }, { locales: ["en"], sourceLocale: "e" })).path).toBe("sourceLocale");
    expect(configError(() => run({ a: "x" }, { paths: ["a..b"] })).path).toBe("paths/0");
  });
});

describe("locales", () => {
  test("default [en]: every text is wrapped in an en member", () => {
    expect(run({ title: "Save" })).toEqual({ title: { en: "Save" } });
  });
  test("tags are canonicalised (en-us → en-US) and repeats dropped", () => {
    expect(run({ title: "Save" }, { locales: ["en-us", "ZH-hant-tw", "EN-US"] })).toEqual({ title: { "en-US": "Save", "zh-Hant-TW": "" } });
  });
});

describe("sourceLocale", () => {
  test("default: the first of locales holds the text", () => {
    expect(run({ title: "Save" }, { locales: ["en", "fr"] })).toEqual({ title: { en: "Save", fr: "" } });
  });
  test("another listed locale holds the text", () => {
    expect(run({ title: "Sauver" }, { locales: ["en", "fr"], sourceLocale: "FR" })).toEqual({ title: { en: "", fr: "Sauver" } });
  });
  test("a source not among locales joins them, first", () => {
    expect(run({ title: "Speichern" }, { locales: ["en", "fr"], sourceLocale: "de" })).toEqual({
      title: { de: "Speichern", en: "", fr: "" },
    });
  });
});

describe("mode and fill", () => {
  const doc = { title: "Save", count: 3, nested: { label: "Cancel", tags: ["a"] } };
  test('wrap (default): "Save" → { "en": "Save", "fr": "" }, at every depth, also inside arrays', () => {
    expect(run(doc, { locales: ["en", "fr"] })).toEqual({
      title: { en: "Save", fr: "" },
      count: 3,
      nested: { label: { en: "Cancel", fr: "" }, tags: [{ en: "a", fr: "" }] },
    });
  });
  test("suffix: sibling keys title_en, title_fr in the member's place; texts in arrays have no key and stay", () => {
    const output = run(doc, { locales: ["en", "fr"], mode: "suffix" }) as Record<string, unknown>;
    expect(output).toEqual({ title_en: "Save", title_fr: "", count: 3, nested: { label_en: "Cancel", label_fr: "", tags: ["a"] } });
    expect(Object.keys(output)).toEqual(["title_en", "title_fr", "count", "nested"]);
  });
  test.each([
    ["empty", ""],
    ["source", "Save"],
    ["null", null],
  ])("fill %s gives the other locales %j", (fill, expected) => {
    expect(run({ title: "Save" }, { locales: ["en", "fr", "de"], fill })).toEqual({ title: { en: "Save", fr: expected, de: expected } });
    expect(run({ title: "Save" }, { locales: ["en", "fr"], fill, mode: "suffix" })).toEqual({ title_en: "Save", title_fr: expected });
  });
});

describe("paths", () => {
  const doc = {
    title: "Save",
    id: "btn-1",
    items: [
      { label: "A", sku: "x1" },
      { label: "B", sku: "x2" },
    ],
    help: { short: "h", long: "hh" },
  };
  test("default: every string value", () => {
    expect(run({ a: "x", b: { c: "y" } }, { locales: ["en", "fr"] })).toEqual({ a: { en: "x", fr: "" }, b: { c: { en: "y", fr: "" } } });
  });
  test("only the texts at the paths (wildcards allowed); a path to an object localizes the texts inside it", () => {
    expect(run(doc, { locales: ["en", "fr"], paths: ["title", "items.*.label", "help"] })).toEqual({
      title: { en: "Save", fr: "" },
      id: "btn-1",
      items: [
        { label: { en: "A", fr: "" }, sku: "x1" },
        { label: { en: "B", fr: "" }, sku: "x2" },
      ],
      help: { short: { en: "h", fr: "" }, long: { en: "hh", fr: "" } },
    });
  });
  test("suffix mode with paths; missing paths and non-text values are left alone", () => {
    expect(run(doc, { locales: ["en", "fr"], mode: "suffix", paths: ["title", "items[1].label", "nope", "items.0.sku.x"] })).toEqual({
      title_en: "Save",
      title_fr: "",
      id: "btn-1",
      items: [
        { label: "A", sku: "x1" },
        { label_en: "B", label_fr: "", sku: "x2" },
      ],
      help: { short: "h", long: "hh" },
    });
  });
  test("escaped paths reach keys holding a dot", () => {
    expect(run({ "a.b": "x", a: { b: "y" } }, { paths: ["a\\.b"] })).toEqual({ "a.b": { en: "x" }, a: { b: "y" } });
  });
});

describe("already localized values", () => {
  const config = { locales: ["en", "fr", "de"], fill: "source" };
  test("a wrapped value only gains the missing locales, from its source text", () => {
    expect(run({ title: { en: "Save", fr: "Enregistrer" } }, config)).toEqual({ title: { en: "Save", fr: "Enregistrer", de: "Save" } });
  });
  test("locale keys are recognised in any case and with other locales present", () => {
    expect(run({ title: { "EN-us": "Save", es: "Guardar" } }, { locales: ["en-US", "fr"] })).toEqual({
      title: { "EN-us": "Save", es: "Guardar", fr: "" },
    });
  });
  test("an object whose keys only look like tags is not a localized value ({ id: … })", () => {
    expect(run({ ref: { id: "x1" } }, { locales: ["en", "fr"] })).toEqual({ ref: { id: { en: "x1", fr: "" } } });
  });
  test.each([
    ["wrap", { locales: ["en", "fr"] }],
    ["wrap, fill source", { locales: ["en", "fr"], fill: "source" }],
    ["suffix", { locales: ["en", "fr"], mode: "suffix" }],
    ["suffix with paths", { locales: ["en", "fr"], mode: "suffix", paths: ["title"] }],
    ["wrap with paths", { locales: ["en", "fr"], paths: ["items.*"] }],
  ])("running it twice changes nothing (%s)", (_, cfg) => {
    const doc = [{ title: "Save", items: ["a", "b"], nested: { note: "n", n: 1 } }, "Cancel", 7];
    const once = run(doc, cfg);
    expect(run(once, cfg)).toEqual(once);
  });
  test("suffix: a second run with one more locale adds only that locale", () => {
    const once = run({ title: "Save" }, { locales: ["en", "fr"], mode: "suffix", fill: "source" });
    expect(run(once, { locales: ["en", "fr", "de"], mode: "suffix", fill: "source" })).toEqual({
      title_en: "Save",
      title_fr: "Save",
      title_de: "Save",
    });
    expect(run(once, { locales: ["en", "fr", "de"], mode: "suffix", paths: ["title"] })).toEqual({
      title_en: "Save",
      title_fr: "Save",
      title_de: "",
    });
  });
  test("suffix: an existing translation is kept", () => {
    expect(run({ title: "Save", title_fr: "Enregistrer" }, { locales: ["en", "fr"], mode: "suffix" })).toEqual({
      title_en: "Save",
      title_fr: "Enregistrer",
    });
  });
});

describe("record-wise", () => {
  test("an array is handled element by element, paths relative to each element", () => {
    expect(run([{ t: "a", u: "b" }, { t: "c" }, "d", 5, null], { locales: ["en", "fr"], paths: ["t"] })).toEqual([
      { t: { en: "a", fr: "" }, u: "b" },
      { t: { en: "c", fr: "" } },
      "d",
      5,
      null,
    ]);
  });
  test("a string record is wrapped as a whole (default paths)", () => {
    expect(run(["Save"], { locales: ["en", "fr"] })).toEqual([{ en: "Save", fr: "" }]);
    expect(run("Save", { locales: ["en", "fr"] })).toEqual({ en: "Save", fr: "" });
  });
  test("empty inputs", () => {
    expect(run([])).toEqual([]);
    expect(run({})).toEqual({});
  });
});

describe("prototype keys are data", () => {
  test("__proto__ and constructor members are localized as keys and reach no prototype", () => {
    const doc = JSON.parse('{"__proto__":{"polluted":"x"},"constructor":"c"}');
    for (const mode of ["wrap", "suffix"]) {
      const output = run(doc, { locales: ["en", "fr"], mode }) as Record<string, unknown>;
      expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
      expect(JSON.stringify(output)).toBe(
        mode === "wrap"
          ? '{"__proto__":{"polluted":{"en":"x","fr":""}},"constructor":{"en":"c","fr":""}}'
          : '{"__proto__":{"polluted_en":"x","polluted_fr":""},"constructor_en":"c","constructor_fr":""}',
      );
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("wrong input", () => {
  test.each([[42], [true], [null]])("primary %j is a UtilityError", (primary) => {
    expect(() => run(primary)).toThrow(UtilityError);
    expect(() => run(primary)).toThrow("takes texts");
  });
});
