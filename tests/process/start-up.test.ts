/** A failed start-up step: what the steps before it started stops in reverse, then one line and exit 1. */
import { expect, spyOn, test } from "bun:test";
import { StartUp } from "../../src/process/start-up";

test("a failing step stops what was started in reverse, prints one line naming the cause, exits 1", async () => {
  const stopped: string[] = [];
  const exits: number[] = [];
  const start = new StartUp((code) => {
    exits.push(code);
    throw new Error("exited");
  });
  const printed = spyOn(console, "error").mockImplementation(() => {});
  try {
    expect(await start.step(() => "database", String)).toBe("database");
    start.stopOnFailure(() => stopped.push("database"));
    start.stopOnFailure(async () => {
      stopped.push("workers");
      throw new Error("a stop that fails does not hide the cause");
    });
    await expect(
      start.step(
        () => {
          throw new Error("EADDRINUSE");
        },
        (error) => `port 3000 is in use (PORT): ${(error as Error).message}`,
      ),
    ).rejects.toThrow("exited");
    expect(stopped).toEqual(["workers", "database"]);
    expect(printed.mock.calls).toEqual([["kiln: port 3000 is in use (PORT): EADDRINUSE"]]);
    expect(exits).toEqual([1]);
  } finally {
    printed.mockRestore();
  }
});
