// The statement policy against its corpus, against DuckDB's own parser (the engine the agents run), and under
// fast-check properties: concatenations of corpus statements, and lexically hostile inputs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { checkStatementPolicy } from '../domain/statementPolicy.ts';
import type { PolicyOptions, PolicyResult, StatementType, TableRef } from '../domain/statementPolicy.ts';
import { isDeniedFunction, isPathLike } from '../domain/statementPolicyRules.ts';
import { POLICY_CORPUS, SESSION_OPTIONS } from './fixtures/policy-corpus.ts';
import type { CorpusEntry } from './fixtures/policy-corpus.ts';

const QUERY: PolicyOptions = { mode: 'query' };
const optionsOf = (e: CorpusEntry): PolicyOptions => (e.session ? SESSION_OPTIONS : QUERY);
const fmt = (t: TableRef): string => [t.catalog, t.schema, t.name].filter((p) => p !== null).join('.');

let instance: DuckDBInstance;
let duck: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  duck = await instance.connect();
});

afterAll(() => {
  duck.closeSync();
  instance.closeSync();
});

// How DuckDB itself splits the text: the number of statements, or null when DuckDB cannot parse it.
async function duckdbStatementCount(sql: string): Promise<number | null> {
  try {
    return (await duck.extractStatements(sql)).count;
  } catch {
    return null;
  }
}

interface DuckReadFacts {
  error: string | null;
  statements: number;
  tables: string[];
  cteNames: string[];
  functions: string[];
}

// DuckDB's own parse tree for read statements (json_serialize_sql refuses anything that is not a SELECT).
async function duckdbReadFacts(sql: string): Promise<DuckReadFacts> {
  const reader = await duck.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  const json = JSON.parse(String(reader.getRows()[0][0])) as Record<string, unknown>;
  const facts: DuckReadFacts = { error: null, statements: 0, tables: [], cteNames: [], functions: [] };
  if (json.error === true) return { ...facts, error: String(json.error_message) };
  const statements = json.statements as unknown[];
  facts.statements = statements.length;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (typeof v !== 'object' || v === null) return;
    const o = v as Record<string, unknown>;
    if (o.type === 'BASE_TABLE' && typeof o.table_name === 'string') {
      facts.tables.push([o.catalog_name, o.schema_name, o.table_name].filter((p) => typeof p === 'string' && p !== '').join('.'));
    }
    if (typeof o.function_name === 'string') facts.functions.push(o.function_name);
    if (o.cte_map && typeof o.cte_map === 'object') {
      for (const entry of (o.cte_map as { map: { key: string }[] }).map) facts.cteNames.push(entry.key.toLowerCase());
    }
    Object.values(o).forEach(walk);
  };
  walk(statements);
  return facts;
}

// What DuckDB would run must be what the policy judged: same statement count, and for reads, no denied function
// and no table the policy did not report.
async function expectDuckdbAgrees(sql: string, result: PolicyResult & { ok: true }): Promise<void> {
  // DuckDB rewrites a PIVOT statement into a CREATE TYPE plus a SELECT before anything else sees it.
  if (/\b(un)?pivot\b/i.test(sql)) return;
  const count = await duckdbStatementCount(sql);
  if (count === null) return; // DuckDB rejects the text itself: nothing would run.
  expect(count, `statement count for ${JSON.stringify(sql)}`).toBe(result.statements.length);
  if (!result.statements.every((s) => s.type === 'select' || s.type === 'describe')) return; // SELECT-only oracle
  const facts = await duckdbReadFacts(sql);
  if (facts.error !== null && /syntax error|unterminated/i.test(facts.error)) return; // DuckDB cannot parse it either
  expect(facts.error, `DuckDB sees a non-read in ${JSON.stringify(sql)}`).toBeNull();
  expect(facts.statements).toBe(result.statements.length);
  for (const f of facts.functions) expect(isDeniedFunction(f), `DuckDB calls ${f} in ${JSON.stringify(sql)}`).toBe(false);
  const ours = new Set(result.tables.map((t) => fmt(t).toLowerCase()));
  for (const t of facts.tables) {
    expect(isPathLike(t.split('.').at(-1) ?? ''), `DuckDB reads a file ${t}`).toBe(false);
    const bare = !t.includes('.');
    if (bare && facts.cteNames.includes(t.toLowerCase())) continue;
    expect(ours.has(t.toLowerCase()), `table ${t} of ${JSON.stringify(sql)} is missing from ${[...ours].join(', ')}`).toBe(true);
  }
}

describe('statement policy corpus', () => {
  it('has at least 150 entries covering every group', () => {
    expect(POLICY_CORPUS.length).toBeGreaterThanOrEqual(150);
    for (const g of ['allowed', 'rejected', 'bypass', 'session', 'limitation']) {
      expect(POLICY_CORPUS.some((e) => e.group === g), g).toBe(true);
    }
  });

  it.each(POLICY_CORPUS.map((e) => [`${e.group}${e.session ? ' (session)' : ''}: ${e.sql}`, e] as const))('%s', async (_, e) => {
    const r = await checkStatementPolicy(e.sql, optionsOf(e));
    expect({ ok: r.ok, type: r.statementType }).toEqual({ ok: e.ok, type: e.type });
    if (r.ok) {
      expect(r.tables.map(fmt).sort()).toEqual([...(e.tables ?? [])].sort());
      expect(r.materialize).toBe(r.statements.length === 1 && (r.statementType === 'select' || r.statementType === 'describe'));
      await expectDuckdbAgrees(e.sql, r);
    } else {
      expect(r.code).toBe('sql_not_allowed');
      expect(r.message).toMatch(/^(Statement \d+ \(.+\) at line \d+, column \d+|The SQL)/);
    }
  });
});

describe('statement policy results', () => {
  it('names the statement kind and position of a rejected statement', async () => {
    const r = await checkStatementPolicy("SELECT 1;\n  ATTACH 'x.db' AS x");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('Statement 2 (ATTACH) at line 2, column 3');
    const p = await checkStatementPolicy('SELECT 1; LOAD httpfs');
    expect(p).toMatchObject({ ok: false, statementType: null });
    if (!p.ok) expect(p.message).toContain('Statement 2 (LOAD) at line 1, column 11 could not be parsed');
    const c = await checkStatementPolicy('CREATE OR REPLACE SECRET s (TYPE s3)');
    if (!c.ok) expect(c.message).toContain('(CREATE SECRET)');
  });

  it('reports each statement and types a script by its first write', async () => {
    const r = await checkStatementPolicy('SELECT * FROM a; UPDATE b SET x = 1; DELETE FROM c');
    expect(r).toMatchObject({ ok: true, statementType: 'update', isWrite: true, materialize: false });
    if (r.ok) {
      expect(r.statements.map((s) => [s.type, s.isWrite, s.tables.map(fmt)])).toEqual([
        ['select', false, ['a']],
        ['update', true, ['b']],
        ['delete', true, ['c']],
      ]);
    }
    expect(await checkStatementPolicy('DESCRIBE t; SELECT 1')).toMatchObject({ ok: true, statementType: 'describe', materialize: false });
    expect(await checkStatementPolicy('SELECT 1')).toMatchObject({ ok: true, isWrite: false, materialize: true });
  });

  it('keeps quoted identifiers as written and folds unquoted ones', async () => {
    const r = await checkStatementPolicy('SELECT * FROM Cat."Sch".TBL JOIN "cat".s."T b" ON true');
    expect(r.ok && r.tables).toEqual([
      { catalog: 'cat', schema: 'Sch', name: 'tbl' },
      { catalog: 'cat', schema: 's', name: 'T b' },
    ]);
  });

  it('confines session COPY and ATTACH to the options it is given', async () => {
    const sql = "COPY t TO 's3://warehouse/_staging/s1/x.csv'";
    expect((await checkStatementPolicy(sql, { mode: 'session' })).ok).toBe(false);
    expect((await checkStatementPolicy(sql, { mode: 'session', stagingPrefix: 's3://warehouse/_staging/s1' })).ok).toBe(true);
    expect((await checkStatementPolicy(sql, { mode: 'session', stagingPrefix: 's3://warehouse/_staging/s2/' })).ok).toBe(false);
    expect((await checkStatementPolicy("ATTACH 'warehouse'", { mode: 'session' })).ok).toBe(false);
    expect((await checkStatementPolicy("ATTACH 'lake'", { mode: 'session', managedCatalogs: ['lake'] })).ok).toBe(true);
  });
});

// Corpus statements that stand alone: joining them can neither comment out nor quote the separator.
const standalone = POLICY_CORPUS.filter((e) => !e.session && e.sql.trim() !== '' && !/^(--|;)/.test(e.sql.trim()) && !e.sql.includes("'unterminated"));
const separators = ['\n;\n', '\n; ', '\n;\n-- between\n', '\n;/* between */ '];

describe('statement policy properties', () => {
  it('allows a concatenation exactly when every part is allowed', async () => {
    const verdicts = new Map<string, PolicyResult>();
    for (const e of standalone) verdicts.set(e.sql, await checkStatementPolicy(e.sql));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...standalone.map((e) => e.sql)), { minLength: 2, maxLength: 4 }),
        fc.constantFrom(...separators),
        async (parts, sep) => {
          const whole = await checkStatementPolicy(parts.join(sep));
          const each = parts.map((p) => verdicts.get(p) as PolicyResult);
          expect(whole.ok).toBe(each.every((r) => r.ok));
          if (whole.ok) {
            const statements = each.flatMap((r) => (r.ok ? r.statements : []));
            expect(whole.statements).toEqual(statements);
            const expected: StatementType = (statements.find((s) => s.isWrite) ?? statements[0]).type;
            expect(whole.statementType).toBe(expected);
            expect(whole.materialize).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  // Random nested reads (CTEs that shadow tables, subqueries, joins, set operations, DESCRIBE in FROM): every
  // table DuckDB's own parser sees must be in the policy's list, which is what scoped grants are checked against.
  it('reports every table DuckDB would read', async () => {
    const names = ['t', 'u', 'x', 'c.s.t', 'S.U', '"T x"', 'warehouse.main.orders', 'cte1'];
    const { query } = fc.letrec((tie) => ({
      table: fc.constantFrom(...names),
      source: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        tie('table'),
        tie('table'),
        tie('query').map((q) => `(${String(q)}) q`),
        fc.tuple(tie('source'), tie('source')).map(([a, b]) => `${String(a)} JOIN ${String(b)} ON true`),
        tie('table').map((t) => `(DESCRIBE ${String(t)})`),
        fc.constant('range(3)'),
      ),
      query: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        tie('source').map((s) => `SELECT * FROM ${String(s)}`),
        tie('source').map((s) => `FROM ${String(s)}`),
        fc.tuple(fc.constantFrom('x', 'cte1', 't'), tie('query'), tie('query')).map(([n, a, b]) => `WITH ${n} AS (${String(a)}) ${String(b)}`),
        fc.tuple(tie('query'), tie('query')).map(([a, b]) => `${String(a)} UNION ALL ${String(b)}`),
        fc.tuple(tie('query'), tie('source')).map(([a, s]) => `SELECT (${String(a)}) FROM ${String(s)}`),
        fc.tuple(tie('source'), tie('query')).map(([s, a]) => `SELECT * FROM ${String(s)} WHERE a IN (${String(a)})`),
      ),
    }));
    let allowed = 0;
    await fc.assert(
      fc.asyncProperty(query, async (sql) => {
        const r = await checkStatementPolicy(String(sql));
        // These are all plain reads: a rejection can only be the parser failing closed (FROM-first inside IN,
        // nesting past its depth limit), never a policy verdict.
        if (!r.ok) {
          expect(r.message).toMatch(/could not be parsed|could not be read reliably/);
          return;
        }
        allowed++;
        await expectDuckdbAgrees(String(sql), r);
      }),
      { numRuns: 400 },
    );
    expect(allowed).toBeGreaterThan(200);
  });

  // Lexical hazards (quotes, escapes, dollar quotes, comments, line ends) around payloads that must never run:
  // whenever the policy allows the text, DuckDB must split and read it the same way.
  it('never allows text that DuckDB would run differently', async () => {
    const hazards = ["'", "E'", "e'", '\\', "\\'", "''", '$$', '$a$', '$A$', '$1', '$_$', '--', '/*', '*/', ';', '"',
      '\n', '\r', '\f', '\v', '\t', '\u00a0', '\u2028', '\u3000', '`', ' ', '1', 'x', '(', ')', ',', '||'];
    const payloads = [" ATTACH 'x.db' AS x", " SELECT getenv('HOME')", " FROM 'x.csv'", ' DELETE FROM t', ' SELECT 1',
      " FROM read_text('x')", ' FROM t', ' WITH x AS (DELETE FROM t RETURNING *) SELECT 1'];
    const text = fc
      .array(fc.oneof({ arbitrary: fc.constantFrom(...hazards), weight: 4 }, { arbitrary: fc.constantFrom(...payloads), weight: 1 }), {
        minLength: 1,
        maxLength: 10,
      })
      .map((pieces) => `SELECT ${pieces.join('')}`);
    let allowed = 0;
    await fc.assert(
      fc.asyncProperty(text, async (sql) => {
        const r = await checkStatementPolicy(sql);
        if (!r.ok) return;
        allowed++;
        await expectDuckdbAgrees(sql, r);
      }),
      { numRuns: 3000 },
    );
    // The property says something only if a fair share of the generated texts got through the policy.
    expect(allowed).toBeGreaterThan(300);
  });

});
