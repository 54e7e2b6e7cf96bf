import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { allLocales } from "@faker-js/faker";
import utility, { configSchema, type MockDataConfig } from "../../../src/utilities/generate/generate-mock-data";
import { UtilityError } from "../../../src/utilities/types";
import { configErrorOf, configErrors, configure } from "../shared/configure";

const configOf = (partial: Record<string, unknown> = {}) => configure<MockDataConfig>(configSchema, partial);
const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configOf(config) as never) as any[];
const one = (primary: unknown, seed = 1) => run(primary, { count: 1, seed })[0];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const decimalsOf = (value: number) => (String(value).split(".")[1] ?? "").length;

afterEach(() => setSystemTime());

describe("config", () => {
  test("defaults: 10 records, English, no seed", () => {
    expect(configOf()).toEqual({ count: 10, locale: "en" });
    expect(run({ a: "{{word}}" })).toHaveLength(10);
  });
  test("count is an integer from 1 to 10,000; seed an integer; unknown fields are refused", () => {
    for (const count of [0, 10_001, 1.5, "3"]) expect(configErrors(configSchema, { count })).toEqual(["/count"]);
    expect(configErrors(configSchema, { seed: 1.5 })).toEqual(["/seed"]);
    expect(configErrors(configSchema, { seed: "7" })).toEqual(["/seed"]);
    expect(configErrors(configSchema, { locale: 5 })).toEqual(["/locale"]);
    expect(configErrors(configSchema, { extra: 1 })).toEqual(["/extra"]);
    expect(run({ a: 1 }, { count: 10_000 })).toHaveLength(10_000);
    expect(run({ a: 1 }, { count: 1 })).toHaveLength(1);
  });
});

describe("seed", () => {
  const shape = { id: "{{uuid}}", name: "{{fullName}}", when: "{{datetime}}", n: 5, tags: ["x"] };
  test("the same seed gives the same records; another seed other records", () => {
    expect(run(shape, { seed: 42 })).toEqual(run(shape, { seed: 42 }));
    expect(run(shape, { seed: 42 })).not.toEqual(run(shape, { seed: 43 }));
  });
  test("without a seed every run differs", () => {
    expect(run(shape)).not.toEqual(run(shape));
  });
  test("each run has its own generator: runs in between do not change a seeded run", () => {
    const first = run(shape, { seed: 7 });
    run(shape, { seed: 8 });
    run(shape);
    expect(run(shape, { seed: 7 })).toEqual(first);
  });
  test("a seeded run gives the same dates whatever the clock says", () => {
    setSystemTime(new Date("2020-06-01T00:00:00Z"));
    const before = run(shape, { seed: 3 });
    setSystemTime(new Date("2031-02-03T00:00:00Z"));
    expect(run(shape, { seed: 3 })).toEqual(before);
  });
});

describe("locale", () => {
  test("names come from the locale's data", () => {
    const names = run({ first: "{{firstName}}" }, { locale: "de", seed: 1, count: 20 }).map((record) => record.first);
    const german = new Set(Object.values(allLocales.de.person!.first_name as Record<string, string[]>).flat());
    expect(names.every((name) => german.has(name))).toBe(true);
    expect(run({ first: "{{firstName}}" }, { locale: "en", seed: 1, count: 20 })).not.toEqual(
      run({ first: "{{firstName}}" }, { locale: "de", seed: 1, count: 20 }),
    );
  });
  test("regional tags map to faker's locales, falling back to the language", () => {
    expect(run({ a: "{{city}}" }, { locale: "de-AT", count: 1 })).toHaveLength(1);
    expect(run({ a: "{{city}}" }, { locale: "fr-XX", seed: 1, count: 3 })).toEqual(
      run({ a: "{{city}}" }, { locale: "fr", seed: 1, count: 3 }),
    );
    expect(run({ a: "{{city}}" }, { locale: "pt-br", seed: 1, count: 3 })).toEqual(
      run({ a: "{{city}}" }, { locale: "pt-BR", seed: 1, count: 3 }),
    );
  });
  test("an unknown or malformed locale is a config error naming locale", () => {
    for (const locale of ["xx", "en_US", "not a tag"])
      expect(configErrorOf(() => run({ a: 1 }, { locale }))).toMatchObject({ path: "locale" });
  });
});

describe("generator tokens", () => {
  test("identity, person, internet and place generators", () => {
    const record = one({
      id: "{{uuid}}",
      first: "{{firstName}}",
      last: "{{lastName}}",
      full: "{{fullName}}",
      email: "{{email}}",
      phone: "{{phone}}",
      user: "{{username}}",
      company: "{{company}}",
      job: "{{jobTitle}}",
      street: "{{street}}",
      city: "{{city}}",
      country: "{{country}}",
      zip: "{{zip}}",
      lat: "{{latitude}}",
      lng: "{{longitude}}",
      url: "{{url}}",
      ip: "{{ipv4}}",
      color: "{{color}}",
      word: "{{word}}",
      sentence: "{{sentence}}",
      paragraph: "{{paragraph}}",
      flag: "{{boolean}}",
    });
    expect(record.id).toMatch(UUID);
    expect(record.email).toMatch(/^[^@\s]+@[^@\s]+\.[a-z]+$/i);
    expect(record.phone).toMatch(/\d{3}/);
    expect(record.url).toMatch(/^https?:\/\//);
    expect(record.ip).toMatch(/^(\d{1,3}\.){3}\d{1,3}$/);
    expect(record.lat).toBeGreaterThanOrEqual(-90);
    expect(record.lat).toBeLessThanOrEqual(90);
    expect(record.lng).toBeGreaterThanOrEqual(-180);
    expect(record.lng).toBeLessThanOrEqual(180);
    expect(typeof record.flag).toBe("boolean");
    expect(record.sentence).toMatch(/^[A-Z].*\.$/);
    expect(record.paragraph.length).toBeGreaterThan(record.word.length);
    for (const key of ["first", "last", "full", "user", "company", "job", "street", "city", "country", "zip", "color", "word"]) {
      expect(typeof record[key]).toBe("string");
      expect(record[key].length).toBeGreaterThan(0);
    }
  });

  test("integer(min,max) and float(min,max,decimals) stay in range and keep their type", () => {
    for (const record of run(
      { i: "{{integer(18, 65)}}", f: "{{float(1, 2, 3)}}", d: "{{integer}}", g: "{{float}}" },
      { count: 200, seed: 5 },
    )) {
      expect(Number.isInteger(record.i)).toBe(true);
      expect(record.i).toBeGreaterThanOrEqual(18);
      expect(record.i).toBeLessThanOrEqual(65);
      expect(record.f).toBeGreaterThanOrEqual(1);
      expect(record.f).toBeLessThanOrEqual(2);
      expect(decimalsOf(record.f)).toBeLessThanOrEqual(3);
      expect(record.d).toBeGreaterThanOrEqual(0);
      expect(record.d).toBeLessThanOrEqual(1000);
      expect(decimalsOf(record.g)).toBeLessThanOrEqual(2);
    }
  });

  test("date(from,to) gives YYYY-MM-DD and datetime(from,to) ISO 8601, inside the bounds", () => {
    for (const record of run(
      { d: "{{date(2024-01-01, 2024-01-31)}}", t: "{{datetime(2024-03-01T00:00:00Z, 2024-03-02T00:00:00Z)}}", n: "{{datetime}}" },
      { count: 100, seed: 9 },
    )) {
      expect(record.d).toMatch(/^2024-01-(0[1-9]|[12]\d|3[01])$/);
      expect(record.t).toMatch(/^2024-03-0[12]T/);
      expect(record.n).toMatch(ISO_DATETIME);
      expect(record.n < "2025-01-01").toBe(true); // seeded: the year before the fixed reference date
    }
  });

  test("pick(a,b,…) chooses among its arguments: bare words, quoted text, numbers, booleans, null", () => {
    const seen = new Set(
      run({ p: `{{pick(active, "on hold, maybe", 'x', 3, true, null)}}` }, { count: 300, seed: 2 }).map((record) =>
        JSON.stringify(record.p),
      ),
    );
    expect([...seen].sort()).toEqual(['"active"', '"on hold, maybe"', '"x"', "3", "null", "true"]);
  });

  test("tokens inside text are interpolated into a string; spaces inside the braces are allowed", () => {
    const record = one({ greeting: "Hi {{ firstName }}, you are {{integer(7, 7)}}!" });
    expect(record.greeting).toMatch(/^Hi \S+, you are 7!$/);
  });

  test("a string primary is a token too", () => {
    expect(run("{{integer(1, 1)}}", { count: 3 })).toEqual([1, 1, 1]);
  });

  test("an unknown generator or bad arguments fail before anything is generated, naming the place", () => {
    expect(() => run({ user: { name: "{{nope}}" } })).toThrow(
      new UtilityError(
        "unknown generator 'nope' at 'user.name'; known generators: uuid, firstName, lastName, fullName, email, phone, username, company, jobTitle, street, city, country, zip, latitude, longitude, url, ipv4, color, word, sentence, paragraph, boolean, integer, float, date, datetime, pick",
      ),
    );
    expect(() => run({ a: "{{integer(5, 1)}}" })).toThrow("{{integer(5, 1)}} at 'a': integer: min (5) is greater than max (1)");
    expect(() => run({ a: "{{integer(1, x)}}" })).toThrow(/integer: max must be a number/);
    expect(() => run({ a: "{{float(0, 1, 99)}}" })).toThrow(/decimals must be an integer from 0 to 15/);
    expect(() => run({ a: "{{pick()}}" })).toThrow(/pick needs at least one choice/);
    expect(() => run({ a: "{{date(yesterday)}}" })).toThrow(/"yesterday" is not a date/);
    expect(() => run({ a: "{{date(2024-02-01, 2024-01-01)}}" })).toThrow(/from is after to/);
    expect(() => run({ a: "{{ 1 + 2 }}" })).toThrow(/is not a generator token/);
    expect(() => run({ a: "{{constructor}}" })).toThrow(/unknown generator 'constructor'/);
  });
});

describe("inference from examples", () => {
  test("key names tell what to generate", () => {
    const record = one({ email: "x", customerEmail: "x", city: "x", billing_city: "x", phone: "x", firstName: "x", website: "x", lat: 0 });
    expect(record.email).toContain("@");
    expect(record.customerEmail).toContain("@");
    expect(record.website).toMatch(/^https?:\/\//);
    expect(record.phone).toMatch(/\d/);
    expect(record.city).not.toBe("x");
    expect(record.billing_city).not.toBe("x");
    expect(record.firstName).not.toBe("x");
    expect(record.lat).not.toBe(0);
  });

  test("else the value's shape: uuids, addresses, URLs, ISO dates and date-times, digit strings", () => {
    const record = one({
      a: "3f2b8c1e-1d2a-4c3b-9a8e-0f1e2d3c4b5a",
      b: "someone@example.org",
      c: "https://example.com/x",
      d: "2024-05-01",
      e: "2024-05-01T10:00:00Z",
      f: "00123",
    });
    expect(record.a).toMatch(UUID);
    expect(record.b).toContain("@");
    expect(record.c).toMatch(/^https?:\/\//);
    expect(record.d).toMatch(/^202[345]-\d{2}-\d{2}$/);
    expect(record.e).toMatch(ISO_DATETIME);
    expect(record.f).toMatch(/^\d{5}$/);
  });

  test("codes keep their pattern of letters, digits and punctuation", () => {
    for (const record of run({ sku: "AB-1234", ref: "inv_20x/7" }, { count: 50, seed: 8 })) {
      expect(record.sku).toMatch(/^[A-Z]{2}-\d{4}$/);
      expect(record.ref).toMatch(/^[a-z]{3}_\d{2}[a-z]\/\d$/);
    }
  });

  test("else the type, length and magnitude", () => {
    for (const record of run(
      {
        word: "Alpha",
        words: "two words here",
        text: "A short sentence.",
        int: 42,
        neg: -7,
        price: 19.99,
        ratio: 0.25,
        on: true,
        none: null,
      },
      { count: 100, seed: 4 },
    )) {
      expect(record.word).toMatch(/^[A-Z][a-z]{1,7}$/);
      expect(record.words.split(" ")).toHaveLength(3);
      expect(record.text).toMatch(/^[A-Z].*\.$/);
      expect(record.text.split(" ")).toHaveLength(3);
      expect(Number.isInteger(record.int) && record.int >= 10 && record.int <= 99).toBe(true);
      expect(Number.isInteger(record.neg) && record.neg <= 0 && record.neg >= -9).toBe(true);
      expect(record.price >= 10 && record.price <= 100 && decimalsOf(record.price) <= 2).toBe(true);
      expect(record.ratio >= 0 && record.ratio <= 1 && decimalsOf(record.ratio) <= 2).toBe(true);
      expect(typeof record.on).toBe("boolean");
      expect(record.none).toBeNull();
    }
  });

  test("arrays get 1 to 5 elements shaped like their first; an empty array stays empty; objects keep key order", () => {
    const records = run(
      { items: [{ sku: "{{integer(1, 9)}}", qty: 3 }, "ignored"], none: [], nested: { z: 1, a: { b: true } } },
      { count: 100, seed: 6 },
    );
    const lengths = new Set(records.map((record) => record.items.length));
    expect([...lengths].sort()).toEqual([1, 2, 3, 4, 5]);
    for (const record of records) {
      for (const item of record.items) expect(Object.keys(item)).toEqual(["sku", "qty"]);
      expect(record.none).toEqual([]);
      expect(Object.keys(record)).toEqual(["items", "none", "nested"]);
      expect(Object.keys(record.nested)).toEqual(["z", "a"]);
    }
  });
});

describe("inputs", () => {
  test("a primary that describes no record is a utility failure", () => {
    for (const primary of [null, 42, true]) expect(() => run(primary)).toThrow(UtilityError);
    expect(() => run(null)).toThrow(
      "generate.generate-mock-data takes a description of one record (an object, an array or a {{generator}} string); primary is null",
    );
  });
  test("prototype keys are plain data in the description and in the records", () => {
    const record = one(JSON.parse('{"__proto__":{"n":"{{integer(1, 1)}}"},"constructor":"{{integer(2, 2)}}"}'));
    expect(JSON.stringify(record)).toBe('{"__proto__":{"n":1},"constructor":2}');
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
  });
});
