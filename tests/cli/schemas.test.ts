/** `kiln schemas` against the real server, as a user runs it. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kiln, realServerUser } from "./support";

setDefaultTimeout(60_000);

const user = realServerUser(["documents"]);

test("create from a file (big numbers as written), ls, validate a file: exit 1 when invalid", async () => {
  const dir = tmpdir();
  const schemaFile = join(dir, `order-${Bun.randomUUIDv7()}.json`);
  writeFileSync(schemaFile, '{"type":"object","required":["id"],"properties":{"id":{"maximum":12345678901234567890}}}');
  const created = await kiln(["schemas", "create", "order", schemaFile, "--folders", "orders", "--mode", "warn"], user);
  expect(created.code).toBe(0);
  const id = created.stdout.trim();
  expect(id).toMatch(/^sch_/);

  const listed = await kiln(["schemas", "ls"], user);
  expect(listed.stdout).toContain(id);
  expect(listed.stdout).toContain("orders");

  const bad = join(dir, `bad-${Bun.randomUUIDv7()}.json`);
  writeFileSync(bad, '{"id":12345678901234567891}');
  const invalid = await kiln(["schemas", "validate", id, bad], user);
  expect(invalid.code).toBe(1);
  expect(invalid.stdout).toContain("/id");
  expect(invalid.stdout).toContain("maximum");

  const good = join(dir, `good-${Bun.randomUUIDv7()}.json`);
  writeFileSync(good, '{"id":12345678901234567890}');
  const valid = await kiln(["schemas", "validate", id, good], user);
  expect(valid.code).toBe(0);
  expect(valid.stdout.trim()).toBe("valid");
});
