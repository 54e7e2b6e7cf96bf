import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { generateApiKey, hashApiKey } from "../../src/core/keys";
import { decodeCursor, encodeCursor } from "../../src/modules/documents/cursor";

describe("API key hashes at rest", () => {
  test("are the SHA-256 of the key in lowercase hex, so keys stored earlier still match", () => {
    // FIPS 180-2's test vector, then keys as Kiln makes them and a key with non-ASCII characters
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    for (const key of [generateApiKey(), generateApiKey(), "kiln_é😀\u0000x"]) {
      expect(hashApiKey(key)).toBe(createHash("sha256").update(key, "utf8").digest("hex"));
    }
  });
});

describe("list cursors", () => {
  test("name their account by the same digest as before, so a cursor handed out earlier still decodes", () => {
    // an account whose tag holds both characters in which base64url differs from base64 (- and _)
    const accountId = "acc_0192f1c4-8d1a-7b2c-9e3f-000000000057";
    const position = { createdAt: 1764350000000, id: "doc_0192f1c4-8d1a-7b2c-9e3f-0123456789ab" };
    const tag = createHash("sha256").update(`kiln-cursor:${accountId}`).digest("base64url").slice(0, 16);
    const issuedEarlier = Buffer.from(JSON.stringify([1, tag, position.createdAt, position.id])).toString("base64url");
    expect(encodeCursor(accountId, position)).toBe(issuedEarlier);
    expect(decodeCursor(accountId, issuedEarlier)).toEqual(position);
    expect(() => decodeCursor("acc_0192f1c4-8d1a-7b2c-9e3f-000000000000", issuedEarlier)).toThrow();
  });
});
