import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import utility, { configSchema, type RedactConfig } from "../../../src/utilities/cleanup/redact";
import { configErrorOf, configErrors, configure } from "../shared/configure";

const configOf = (partial: Record<string, unknown> = {}) => configure<RedactConfig>(configSchema, partial);
const run = (primary: unknown, config: Record<string, unknown> = {}) => utility.run({ primary }, configOf(config) as never);
const ALL = ["email", "phone", "creditCard", "iban", "ipv4", "ipv6", "ssn", "url"];
const sha12 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 12)}`;

describe("config", () => {
  test("defaults: e-mail and phone detectors, full masks with [REDACTED], nothing masked whole", () => {
    expect(configOf()).toEqual({
      patterns: ["email", "phone"],
      customPatterns: [],
      paths: [],
      keys: [],
      maskStyle: "full",
      mask: "[REDACTED]",
    });
  });
  test("unknown patterns, styles and fields are refused by the schema", () => {
    expect(configErrors(configSchema, { patterns: ["passport"] })).toContain("/patterns/0");
    expect(configErrors(configSchema, { patterns: ["email", "email"] })).toEqual(["/patterns"]);
    expect(configErrors(configSchema, { maskStyle: "blur" })).toEqual(["/maskStyle"]);
    expect(configErrors(configSchema, { extra: true })).toEqual(["/extra"]);
  });
});

describe("detectors", () => {
  test("spec example: text around a match is kept", () => {
    expect(run("write to john.doe@example.com")).toBe("write to [REDACTED]");
  });

  test("phone numbers in common formats; dates, times, IP addresses and short numbers are not phones", () => {
    expect(run("call +1 (555) 123-4567, 555.123.4567 or +44 20 7946 0958 now")).toBe("call [REDACTED], [REDACTED] or [REDACTED] now");
    const untouched = "on 2024-01-15 10:30:00, order 12345678 from 192.168.10.10 cost 1234.5678";
    expect(run(untouched)).toBe(untouched);
  });

  test("only the listed detectors run", () => {
    const text = "card 4111 1111 1111 1111, ssn 123-45-6789, ip 10.0.0.1";
    expect(run(text)).toBe(text);
    expect(run(text, { patterns: ["creditCard"] })).toBe("card [REDACTED], ssn 123-45-6789, ip 10.0.0.1");
    expect(run("mail a@b.io", { patterns: [] })).toBe("mail a@b.io");
  });

  test("credit cards must pass the Luhn check", () => {
    const config = { patterns: ["creditCard"] };
    expect(run("4111111111111111 and 5500-0000-0000-0004", config)).toBe("[REDACTED] and [REDACTED]");
    expect(run("4111111111111112", config)).toBe("4111111111111112");
  });

  test("IBANs must pass mod-97 and stop at their country's length", () => {
    const config = { patterns: ["iban"] };
    expect(run("pay DE89 3704 0044 0532 0130 00 AND GB82WEST12345698765432.", config)).toBe("pay [REDACTED] AND [REDACTED].");
    expect(run("DE88 3704 0044 0532 0130 00", config)).toBe("DE88 3704 0044 0532 0130 00");
  });

  test("IPv4 and IPv6 addresses", () => {
    expect(run("from 192.168.1.10 to 2001:db8::ff00:42:8329 via ::1", { patterns: ["ipv4", "ipv6"] })).toBe(
      "from [REDACTED] to [REDACTED] via [REDACTED]",
    );
    expect(run("version 999.1.1.1 at 12:30:45", { patterns: ["ipv4", "ipv6"] })).toBe("version 999.1.1.1 at 12:30:45");
  });

  test("US social security numbers (not the never-issued 000, 666 and 9xx areas)", () => {
    expect(run("ssn 123-45-6789; 000-12-3456; 666-12-3456", { patterns: ["ssn"] })).toBe("ssn [REDACTED]; 000-12-3456; 666-12-3456");
  });

  test("URLs, without the punctuation that ends a sentence; a URL holding an address is one match", () => {
    expect(run("see https://example.com/a?b=1. or www.example.org/x, ok", { patterns: ["url"] })).toBe("see [REDACTED]. or [REDACTED], ok");
    expect(run("go https://x.io/?to=john@example.com", { patterns: ["url", "email"] })).toBe("go [REDACTED]");
  });

  test("every value in a document is searched; keys, numbers and booleans never change", () => {
    const input = { "a@b.io": ["mail a@b.io"], nested: { phone: "+1 555 123 4567", n: 5551234567, ok: true, none: null } };
    expect(run(input)).toEqual({ "a@b.io": ["mail [REDACTED]"], nested: { phone: "[REDACTED]", n: 5551234567, ok: true, none: null } });
  });

  test("scalars and empty containers pass through", () => {
    for (const value of [null, 3, true, "plain", [], {}]) expect(run(value)).toEqual(value);
  });
});

describe("customPatterns", () => {
  test("extra regular expressions are masked like detections", () => {
    expect(run("ticket ABC-1234 and abc-9", { customPatterns: ["[A-Z]{3}-\\d{4}"] })).toBe("ticket [REDACTED] and abc-9");
  });
  test("an invalid pattern is a config error naming it", () => {
    expect(configErrorOf(() => run("x", { customPatterns: ["ok", "(unclosed"] }))).toEqual({
      path: "customPatterns/1",
      message: expect.stringMatching(/^not a valid regular expression/),
    });
  });
  test("patterns run on a linear-time engine: a catastrophic pattern on a long input still answers", () => {
    const text = `${"a".repeat(50_000)}!`;
    expect(run(text, { patterns: [], customPatterns: ["(a+)+$"] })).toBe(text);
  });
  test("an empty match masks nothing", () => {
    expect(run("abc", { patterns: [], customPatterns: ["x*"] })).toBe("abc");
  });
});

describe("paths and keys", () => {
  test("values at paths are masked whole, whatever they hold; wildcards reach every element", () => {
    const input = { users: [{ ssn: 123456789, profile: { a: 1 } }, { ssn: "x" }], note: "keep" };
    expect(run(input, { paths: ["users.*.ssn", "users[0].profile"] })).toEqual({
      users: [{ ssn: "[REDACTED]", profile: "[REDACTED]" }, { ssn: "[REDACTED]" }],
      note: "keep",
    });
  });
  test("paths start at the root of primary (use `*.field` for an array of records)", () => {
    expect(run([{ secret: "s" }], { paths: ["secret"] })).toEqual([{ secret: "s" }]);
    expect(run([{ secret: "s" }], { paths: ["*.secret"] })).toEqual([{ secret: "[REDACTED]" }]);
  });
  test("an invalid path is a config error naming it", () => {
    expect(configErrorOf(() => run({}, { paths: ["a..b"] }))).toMatchObject({ path: "paths/0" });
  });
  test("members named by keys are masked whole at any depth, case-insensitively, and keep their names", () => {
    const input = { Password: "hunter2", nested: [{ password: { old: "a" }, API_KEY: 42 }], passwords: "list" };
    expect(run(input, { keys: ["password", "api_key"] })).toEqual({
      Password: "[REDACTED]",
      nested: [{ password: "[REDACTED]", API_KEY: "[REDACTED]" }],
      passwords: "list",
    });
  });
  test("mask sets the replacement text", () => {
    expect(run({ a: "x@y.io", password: "p" }, { keys: ["password"], mask: "***" })).toEqual({ a: "***", password: "***" });
  });
});

describe("maskStyle", () => {
  test("partial: e-mail keeps its first character and domain; phones and cards keep their last four digits", () => {
    expect(run("write to john.doe@example.com", { maskStyle: "partial" })).toBe("write to j***@example.com");
    expect(run("call +1 (555) 123-4567", { maskStyle: "partial" })).toBe("call +* (***) ***-4567");
    expect(run("4111 1111 1111 1111", { patterns: ["creditCard"], maskStyle: "partial" })).toBe("**** **** **** 1111");
    expect(run("123-45-6789", { patterns: ["ssn"], maskStyle: "partial" })).toBe("***-**-6789");
  });
  test("partial hints of the other detectors", () => {
    const config = { patterns: ALL, maskStyle: "partial", customPatterns: ["TOKEN\\d+"] };
    expect(run("10.1.2.3 | 2001:db8::1 | https://example.com/p?q=1 | GB82WEST12345698765432 | TOKEN42", config)).toBe(
      "10.*.*.* | 2001:*** | https://example.com/*** | GB****************5432 | T***",
    );
  });
  test("partial masks a whole value with mask: an arbitrary value has no safe hint", () => {
    expect(run({ password: "hunter2" }, { keys: ["password"], maskStyle: "partial" })).toEqual({ password: "[REDACTED]" });
  });
  test("hash: sha256: and the first 12 hex digits of the match's SHA-256, the same for the same text", () => {
    const output = run(["a a@b.io", "b a@b.io", "c c@d.io"], { maskStyle: "hash" }) as string[];
    expect(output).toEqual([`a ${sha12("a@b.io")}`, `b ${sha12("a@b.io")}`, `c ${sha12("c@d.io")}`]);
  });
  test("hash of a whole value: the string itself, or the JSON text of anything else", () => {
    expect(run({ password: "hunter2", pin: [1, 2] }, { keys: ["password", "pin"], maskStyle: "hash" })).toEqual({
      password: sha12("hunter2"),
      pin: sha12("[1,2]"),
    });
  });
});

describe("prototype keys are plain data", () => {
  test("members named __proto__ and constructor are searched, masked by key, and stay own members", () => {
    const input = JSON.parse('{"__proto__":{"mail":"a@b.io"},"constructor":"x@y.io","prototype":"secret"}');
    const output = run(input, { keys: ["prototype"] }) as object;
    expect(JSON.stringify(output)).toBe('{"__proto__":{"mail":"[REDACTED]"},"constructor":"[REDACTED]","prototype":"[REDACTED]"}');
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
  });
  test("keys: ['constructor'] does not invent members", () => {
    expect(run({ a: 1 }, { keys: ["constructor", "__proto__"] })).toEqual({ a: 1 });
  });
});
