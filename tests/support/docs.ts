/**
 * Code blocks of docs/, for tests that run what the documentation says: the fenced block that follows
 * the HTML comment holding `marker` (`<!-- … marker … -->`), so a reader sees the block and the test
 * runs exactly it; and docs/utilities.md's sections with their examples.
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

/** A `## <utility id>` section of docs/utilities.md. */
export interface UtilitySection {
  id: string;
  text: string;
}

/** docs/utilities.md, one section per utility. */
export function utilitySections(): UtilitySection[] {
  return readFileSync(join(import.meta.dir, "../../docs/utilities.md"), "utf8")
    .split(/^## /m)
    .slice(1)
    .map((chunk) => ({ id: chunk.slice(0, chunk.indexOf("\n")).trim(), text: chunk }));
}

/** A section's examples: each `json example` block (a run's request body) with the `json output` block after it. */
export function examplesOf(section: UtilitySection): { request: unknown; output: unknown }[] {
  const blocks = [...section.text.matchAll(/```json (example|output)\n([\s\S]*?)\n```/g)];
  const pairs: { request: unknown; output: unknown }[] = [];
  for (let index = 0; index < blocks.length; index += 2) {
    const [example, output] = [blocks[index], blocks[index + 1]];
    if (example[1] !== "example" || output?.[1] !== "output") throw new Error(`${section.id}: an example must be followed by its output`);
    pairs.push({ request: JSON.parse(example[2]), output: JSON.parse(output[2]) });
  }
  return pairs;
}
