/** `kiln indexes` and `kiln query` against the real server (its index builds included), as a user runs them. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { kiln, realServerUser } from "./support";

setDefaultTimeout(60_000);

const user = realServerUser(["documents"]);

const create = (content: string) =>
  fetch(`${user.url}/api/v1/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
    body: `{"name":"o","folder":"orders","content":${content}}`,
  });

test("indexes create builds in the background; query finds with exact numbers; indexes rm drops it", async () => {
  expect((await create(`{"country":"FR","price":12345678901234567891,"sku":"A"}`)).status).toBe(201);
  expect((await create(`{"country":"FR","price":3,"sku":"B"}`)).status).toBe(201);
  const created = await kiln(["indexes", "create", "--folder", "orders", "--fields", "/country,/price:desc"], user);
  expect(created.code).toBe(0);
  const id = /^(idx_\S+)/.exec(created.stdout)![1]!;
  let state = "";
  for (let i = 0; i < 100 && !state.includes("ready"); i++) {
    await Bun.sleep(100);
    state = (await kiln(["indexes", "ls"], user)).stdout;
  }
  expect(state).toContain("ready");
  expect(state).toContain("/country,/price:desc");

  const found = await kiln(
    [
      "--json",
      "query",
      "--folder",
      "orders",
      "--filter",
      '{"/country":"FR","/price":{"$gt":12345678901234567890}}',
      "--fields",
      "/price,/sku",
    ],
    user,
  );
  expect(found.code).toBe(0);
  expect(found.stdout).toContain('"fields":{"/price":12345678901234567891,"/sku":"A"}');
  const table = await kiln(
    ["query", "--folder", "orders", "--filter", '{"/country":"FR"}', "--sort", "/price:desc", "--fields", "/sku", "--all"],
    user,
  );
  const skus = table.stdout
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/).at(-1));
  expect(skus).toEqual(["A", "B"]);

  const refused = await kiln(["query", "--folder", "orders", "--filter", '{"/sku":"A"}'], user);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("suggestedIndex");
  expect(refused.stderr).toContain('to serve it: kiln indexes create --folder "orders" --fields "/sku"');
  const bad = await kiln(["query", "--folder", "orders", "--filter", "{not json"], user);
  expect(bad.code).toBe(2);

  expect((await kiln(["indexes", "rm", id], user)).stdout).toContain(`dropped ${id}`);
  expect((await kiln(["indexes", "ls"], user)).stdout).not.toContain(id);
});
