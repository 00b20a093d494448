// A clone explains itself: the contract the product keeps is in docs/ (docs/invariants.md, docs/api-decisions.md),
// so no code, doc or test cites a document that lives outside the repository.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SKIP = new Set(['node_modules', '.git', '.eider', '.test-data', 'dist', 'fixtures']);
const OUTSIDE = /(?<![\w-])decisions\.md|design-card\.md|service-spec\.md|engineering-notes\.md|\.\.\/shared\//;

function textFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return textFiles(p);
    return /\.(ts|tsx|md|sh|yaml|yml)$/.test(name) ? [p] : [];
  });
}

describe('the repository stands alone', () => {
  it('cites no document outside it', () => {
    const cites = textFiles(ROOT).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE.test(line) && !line.includes('selfContained') ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(cites).toEqual([]);
  });

  it('defines every invariant it cites', () => {
    const defined = new Set([...readFileSync(join(ROOT, 'docs/invariants.md'), 'utf8').matchAll(/^\| (I\d+) \|/gm)].map((m) => m[1]));
    const cited = new Set(textFiles(ROOT).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/\b(I\d{1,2})\b(?=[:),;.' ]|$)/gm)].map((m) => m[1])));
    expect([...cited].filter((i) => !defined.has(i))).toEqual([]);
    expect(defined.size).toBe(10);
  });
});
