// Runnable examples in the docs are marked `<!-- docs-test: name -->` before their fenced sh block; a block that
// cannot run as written is marked `<!-- docs-test: not runnable: why -->`. A walk-through's expected output follows
// it in a ```text block marked `<!-- docs-test: output -->`.

/** The shell block that follows a `<!-- docs-test: name` marker in a Markdown file. */
export function docsBlock(markdown: string, name: string): string {
  const at = markdown.indexOf(`<!-- docs-test: ${name}`);
  if (at < 0) throw new Error(`no docs-test block named ${name}`);
  const m = /```sh\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!m) throw new Error(`docs-test ${name} has no sh block`);
  return m[1];
}

export interface Walkthrough {
  name: string;
  script: string;
  /** the text the script must print, when the page shows it */
  output: string | null;
}

/** Every `<!-- docs-test: walkthrough:<name> -->` block of a page, in page order, with its shown output. */
export function walkthroughs(markdown: string): Walkthrough[] {
  const out: Walkthrough[] = [];
  const re = /<!-- docs-test: (walkthrough:[\w-]+) -->\s*\n```sh\n([\s\S]*?)```(\s*\n<!-- docs-test: output -->\s*\n```text\n([\s\S]*?)```)?/g;
  for (const m of markdown.matchAll(re)) out.push({ name: m[1], script: m[2], output: m[4] ?? null });
  return out;
}

/** The fenced sh blocks of a page that carry no docs-test marker on one of the three lines before them. */
export function unmarkedShellBlocks(markdown: string): number[] {
  const lines = markdown.split('\n');
  const missing: number[] = [];
  let inFence = false;
  lines.forEach((line, i) => {
    if (!line.startsWith('```')) return;
    if (!inFence && /^```(sh|bash|shell|console)\s*$/.test(line)) {
      const before = lines.slice(Math.max(0, i - 3), i).join('\n');
      if (!before.includes('<!-- docs-test: ')) missing.push(i + 1);
    }
    inFence = !inFence;
  });
  return missing;
}
