// Formats SQL for reading: SQL keywords upper-case, each clause on its own line, a SELECT list one item a line,
// WHERE and HAVING conditions one a line, subqueries indented. Strings, quoted names, comments and the case of
// other words are kept as written; only the whitespace between tokens changes. A small, dependency-free layout
// (the SQL formatters on npm that know DuckDB are tens of megabytes of WebAssembly).
import { FUNCTION_KINDS } from './duckdbDialect.ts';

type Kind = 'word' | 'quoted' | 'string' | 'number' | 'op' | 'open' | 'close' | 'comma' | 'dot' | 'semi' | 'line-comment' | 'block-comment';
interface Tok {
  kind: Kind;
  text: string;
}

const OPS = ['->>', '::', '<=', '>=', '<>', '!=', '||', '->', '=>', ':=', '**', '//', '<<', '>>', '==', '!~~'];

function tokenize(sql: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    const rest = sql.slice(i, i + 3);
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      out.push({ kind: 'line-comment', text: sql.slice(i, end).trimEnd() });
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out.push({ kind: 'block-comment', text: sql.slice(i, stop) });
      i = stop;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < n && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      out.push({ kind: c === '"' ? 'quoted' : 'string', text: sql.slice(i, j + 1) });
      i = j + 1;
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(sql.slice(i))) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))![0];
      const end = sql.indexOf(tag, i + tag.length);
      const stop = end < 0 ? n : end + tag.length;
      out.push({ kind: 'string', text: sql.slice(i, stop) });
      i = stop;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][\w$]*/.exec(sql.slice(i))![0];
      out.push({ kind: 'word', text: m });
      i += m.length;
    } else if (/\d/.test(c) || (c === '.' && /\d/.test(sql[i + 1] ?? ''))) {
      const m = /^(\d[\d_]*)?(\.\d*)?([eE][+-]?\d+)?/.exec(sql.slice(i))![0] || c;
      out.push({ kind: 'number', text: m });
      i += m.length;
    } else if (c === '(' || c === '[' || c === '{') {
      out.push({ kind: 'open', text: c });
      i++;
    } else if (c === ')' || c === ']' || c === '}') {
      out.push({ kind: 'close', text: c });
      i++;
    } else if (c === ',') {
      out.push({ kind: 'comma', text: c });
      i++;
    } else if (c === ';') {
      out.push({ kind: 'semi', text: c });
      i++;
    } else if (c === '.') {
      out.push({ kind: 'dot', text: c });
      i++;
    } else {
      const op = OPS.find((o) => rest.startsWith(o)) ?? c;
      out.push({ kind: 'op', text: op });
      i += op.length;
    }
  }
  return out;
}

// Keywords written upper-case. A word that is also a function (LEFT, REPLACE, RANGE) is upper-cased only when no
// parenthesis follows it.
const KEYWORDS = new Set(
  ('select from where group by order having limit offset join left right full inner outer cross natural asof positional ' +
    'anti semi on using as and or not in is null like ilike glob similar between case when then else end distinct union all ' +
    'except intersect with recursive insert into values update set delete create table view schema replace if exists ' +
    'drop alter add column primary key default asc desc nulls first last over partition window rows range groups ' +
    'unbounded preceding following current row filter qualify pivot unpivot describe summarize show copy to returning ' +
    'cast try_cast true false lateral exclude any some interval temporary temp macro function sequence type materialized ' +
    'attach detach use install load pragma explain analyze within collate escape unique references check constraint ' +
    'only sample tablesample by_name struct map list array').split(' '),
);

// Clauses that begin a line; the first word decides (GROUP BY, LEFT OUTER JOIN … read on).
const CLAUSE = new Set(['select', 'from', 'where', 'group', 'order', 'having', 'limit', 'offset', 'qualify', 'window', 'union', 'except', 'intersect', 'with', 'values', 'set', 'returning', 'insert', 'update', 'delete', 'using', 'pivot', 'unpivot']);
const JOIN_START = new Set(['join', 'left', 'right', 'full', 'inner', 'cross', 'natural', 'asof', 'positional', 'anti', 'semi']);
const NO_SPACE_BEFORE = new Set<Kind>(['comma', 'close', 'dot', 'semi']);

export function formatSql(sql: string): string {
  const toks = tokenize(sql);
  let out = '';
  let line = '';
  const lines: string[] = [];
  // one frame per open parenthesis: its indent and whether it holds a subquery
  const frames: Array<{ indent: number; sub: boolean; clause: string }> = [{ indent: 0, sub: true, clause: '' }];
  const top = () => frames[frames.length - 1];
  const newline = (indent: number) => {
    if (line.trim()) lines.push(line.trimEnd());
    line = ' '.repeat(indent);
  };
  const emit = (text: string, space: boolean) => {
    if (space && line.trim() && !line.endsWith(' ')) line += ' ';
    line += text;
  };
  let prev: Tok | null = null;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    const next = toks[i + 1];
    const lower = t.kind === 'word' ? t.text.toLowerCase() : '';
    const f = top();
    let text = t.text;
    const isKeyword = t.kind === 'word' && KEYWORDS.has(lower) && !(next?.kind === 'open' && FUNCTION_KINDS.has(lower) && !CLAUSE.has(lower)) && prev?.kind !== 'dot';
    if (isKeyword) text = t.text.toUpperCase();
    let space = !!prev && !NO_SPACE_BEFORE.has(t.kind) && prev.kind !== 'open' && prev.kind !== 'dot' && !(prev.kind === 'op' && prev.text === '::') && !(t.kind === 'op' && t.text === '::');
    if (t.kind === 'open' && prev && (prev.kind === 'word' || prev.kind === 'quoted' || prev.kind === 'close') && !(prev.kind === 'word' && KEYWORDS.has(prev.text.toLowerCase()) && !FUNCTION_KINDS.has(prev.text.toLowerCase()))) space = false;
    if (t.kind === 'open' && t.text === '[' && prev && prev.kind !== 'op' && prev.kind !== 'comma' && prev.kind !== 'open') space = false;

    if (isKeyword && f.sub && (CLAUSE.has(lower) || (JOIN_START.has(lower) && isJoin(toks, i))) && !(lower === 'using' && f.clause !== 'delete') && !continuesClause(prev, lower)) {
      newline(f.indent);
      f.clause = lower;
      emit(text, false);
      if (lower === 'select') {
        // DISTINCT stays on SELECT's line; the list starts below
        while (toks[i + 1]?.kind === 'word' && ['distinct', 'all'].includes(toks[i + 1].text.toLowerCase())) {
          i++;
          emit(toks[i].text.toUpperCase(), true);
        }
        newline(f.indent + 2);
        prev = toks[i];
        continue;
      }
      prev = t;
      continue;
    }
    if (t.kind === 'open') {
      const sub = next?.kind === 'word' && ['select', 'with', 'values', 'from'].includes(next.text.toLowerCase());
      emit(text, space);
      frames.push({ indent: sub ? f.indent + 4 : f.indent, sub, clause: '' });
      if (sub) newline(f.indent + 4);
      prev = t;
      continue;
    }
    if (t.kind === 'close') {
      const closing = frames.length > 1 ? frames.pop()! : f;
      if (closing.sub) newline(top().indent + 2);
      emit(text, false);
      prev = t;
      continue;
    }
    if (t.kind === 'comma') {
      emit(text, false);
      if (f.sub && f.clause === 'select') newline(f.indent + 2);
      prev = t;
      continue;
    }
    if (t.kind === 'semi') {
      emit(text, false);
      newline(0);
      lines.push('');
      frames.length = 1;
      frames[0].clause = '';
      prev = null;
      continue;
    }
    if (isKeyword && f.sub && (lower === 'and' || lower === 'or') && (f.clause === 'where' || f.clause === 'having' || f.clause === 'qualify') && !betweenAnd(toks, i)) {
      newline(f.indent + 2);
      emit(text, false);
      prev = t;
      continue;
    }
    emit(text, space);
    if (t.kind === 'line-comment') newline(f.indent + (f.clause === 'select' ? 2 : 0));
    prev = t;
  }
  newline(0);
  out = lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
  return out;
}

/** Whether the word at `i` starts a join (LEFT JOIN, NATURAL LEFT OUTER JOIN), not LEFT(…) or a column. */
function isJoin(toks: Tok[], i: number): boolean {
  for (let j = i; j < toks.length && j < i + 4; j++) {
    const w = toks[j].kind === 'word' ? toks[j].text.toLowerCase() : '';
    if (w === 'join') return true;
    if (!JOIN_START.has(w) && w !== 'outer') return false;
  }
  return false;
}

/** GROUP BY after ORDER's clause keyword, UNION ALL, INSERT INTO: the words that continue a clause's first. */
function continuesClause(prev: Tok | null, lower: string): boolean {
  if (!prev || prev.kind !== 'word') return false;
  const p = prev.text.toLowerCase();
  return (JOIN_START.has(p) && lower === 'join') || (p === 'delete' && lower === 'from') || (p === 'insert' && lower === 'into');
}

/** The AND of BETWEEN … AND … stays on its line. */
function betweenAnd(toks: Tok[], i: number): boolean {
  for (let j = i - 1; j >= 0 && j > i - 8; j--) {
    const w = toks[j].kind === 'word' ? toks[j].text.toLowerCase() : '';
    if (w === 'between') return true;
    if (w === 'and' || w === 'or' || w === 'where') return false;
  }
  return false;
}
