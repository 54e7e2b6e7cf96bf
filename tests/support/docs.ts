/**
 * Code blocks of docs/, for tests that run what the documentation says: the fenced block that follows
 * the HTML comment holding `marker` (`<!-- … marker … -->`), so a reader sees the block and the test
 * runs exactly it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function docsBlock(file: string, marker: string): string {
  const text = readFileSync(join(import.meta.dir, "../../docs", file), "utf8");
  const comment = text.indexOf(marker);
  if (comment === -1 || text.lastIndexOf("<!--", comment) === -1) throw new Error(`docs/${file}: no comment marks ${marker}`);
  const block = /```[a-z]*\n([\s\S]*?)\n```/.exec(text.slice(comment));
  if (!block) throw new Error(`docs/${file}: no code block after ${marker}`);
  return `${block[1]}\n`;
}
