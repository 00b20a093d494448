// Runnable examples in the docs are marked `<!-- docs-test: name -->` before their fenced sh block.

/** The shell block that follows a `<!-- docs-test: name` marker in a Markdown file. */
export function docsBlock(markdown: string, name: string): string {
  const at = markdown.indexOf(`<!-- docs-test: ${name}`);
  if (at < 0) throw new Error(`no docs-test block named ${name}`);
  const m = /```sh\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!m) throw new Error(`docs-test ${name} has no sh block`);
  return m[1];
}
