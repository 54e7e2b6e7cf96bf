/**
 * csv-to-json(json-to-csv(rows)) gives the rows back.
 *
 * Domain: arrays of flat records that all have the same keys (at least one key, none empty), every
 * value a string (any text: delimiters, quotes, CR, LF, tabs, a BOM, astral characters); json-to-csv
 * with the same delimiter (, ; tab |) as csv-to-json, either line ending, escapeFormulas false (it
 * changes texts on purpose); csv-to-json with that delimiter and inferTypes false (otherwise "30" reads
 * back as 30). All other settings are the defaults.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import csvToJson from "../../../src/utilities/convert/csv-to-json";
import jsonToCsv from "../../../src/utilities/convert/json-to-csv";
import { configure } from "../shared/configure";

const tricky = fc.constantFrom(",", ";", "\t", "|", '"', "\r", "\n", "\r\n", " ", "\uFEFF", "=", "é", "😀", "a", "0");
const text = fc.oneof(fc.string({ unit: tricky, maxLength: 8 }), fc.string({ unit: "binary", maxLength: 8 }));
const key = text.filter((candidate) => candidate !== "");

const table = fc
  .uniqueArray(key, { minLength: 1, maxLength: 5 })
  .chain((keys) =>
    fc
      .array(fc.tuple(...keys.map(() => text)), { maxLength: 6 })
      .map((rows) => rows.map((values) => Object.fromEntries(keys.map((name, index) => [name, values[index]])))),
  );

test("csv-to-json(json-to-csv(rows)) equals rows for flat string records", () => {
  fc.assert(
    fc.property(table, fc.constantFrom(",", ";", "\t", "|"), fc.constantFrom("\n", "\r\n"), (rows, delimiter, lineEnding) => {
      const csv = jsonToCsv.run({ primary: rows }, configure(jsonToCsv.configSchema, { delimiter, lineEnding, escapeFormulas: false }));
      const back = csvToJson.run({ primary: csv }, configure(csvToJson.configSchema, { delimiter, inferTypes: false }));
      expect(back).toEqual(rows);
    }),
    { numRuns: 300 },
  );
});
