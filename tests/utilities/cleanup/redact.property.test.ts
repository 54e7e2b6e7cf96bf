import { expect, test } from "bun:test";
import fc from "fast-check";
import { redact } from "../../../src/utilities/cleanup/redact";

const SEPARATORS = [" ", ", ", "\n", " <", "> ", "; ", "\t", "mail: "];
const word = fc.stringMatching(/^[A-Za-z0-9]{1,8}$/);
/** Text with generated addresses between words and separators, and the addresses it holds. */
const textWithEmails = fc
  .array(
    fc.oneof(
      fc.emailAddress().map((email) => ({ email })),
      word.map((text) => ({ text })),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .chain((parts) =>
    fc.array(fc.constantFrom(...SEPARATORS), { minLength: parts.length, maxLength: parts.length }).map((separators) => ({
      text: parts.map((part, index) => ("email" in part ? part.email : part.text) + separators[index]).join(""),
      emails: parts.flatMap((part) => ("email" in part ? [part.email] : [])),
    })),
  );

test("the output never contains a generated e-mail address of the input, whatever the style", () => {
  fc.assert(
    fc.property(textWithEmails, fc.constantFrom("full" as const, "partial" as const, "hash" as const), ({ text, emails }, maskStyle) => {
      const output = redact(
        { note: text, list: [text] },
        {
          patterns: ["email", "phone"],
          customPatterns: [],
          paths: [],
          keys: [],
          maskStyle,
          mask: "[REDACTED]",
        },
      );
      const serialised = JSON.stringify(output);
      // `partial` masks with `*`: a local part made only of `*` (`*@a.aa` → `****@a.aa`) reads the same
      // as its mask, so its address is found in the output although nothing of it was kept.
      const checkable = maskStyle === "partial" ? emails.filter((email) => !/^\*+@/.test(email)) : emails;
      for (const email of checkable) expect(serialised.includes(JSON.stringify(email).slice(1, -1))).toBe(false);
    }),
    { numRuns: 400 },
  );
});
