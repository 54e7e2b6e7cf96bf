import { describe, expect, test } from "bun:test";
import { readLimited } from "../../src/http/body";

/** A request whose body arrives in the given chunks, declaring `declared` bytes (or nothing). */
function streamed(chunks: Uint8Array[], declared?: number): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Request("http://localhost/", {
    method: "POST",
    body,
    headers: declared === undefined ? {} : { "content-length": String(declared) },
  });
}

const pattern = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff);
const KB = 1024;

describe("readLimited", () => {
  const chunks = [pattern(100 * KB, 1), pattern(7, 2), pattern(60 * KB, 3)];
  const whole = Buffer.concat(chunks);

  test("the bytes arrive intact, whether the length is declared truly, too short, too long or not at all", async () => {
    for (const declared of [undefined, whole.byteLength, whole.byteLength + 5000, 80 * KB, 100 * KB + 7]) {
      const bytes = await readLimited(streamed(chunks, declared), 1024 * KB);
      expect(bytes === "too_large" ? bytes : Buffer.from(bytes as Uint8Array).equals(whole)).toBe(true);
    }
  });

  test("past the limit: too_large, whatever the declared length says", async () => {
    expect(await readLimited(streamed(chunks, 100 * KB), 150 * KB)).toBe("too_large");
    expect(await readLimited(streamed(chunks), 150 * KB)).toBe("too_large");
    expect(await readLimited(streamed(chunks, 200 * KB), 150 * KB)).toBe("too_large");
  });
});
