// DuckDB's SQL for the editor: CodeMirror ships no DuckDB dialect, so this one takes PostgreSQL's lexical rules
// (DuckDB's parser descends from PostgreSQL's: dollar quoting, its operators) with DuckDB's own keywords, types and
// function names, generated from DuckDB itself (scripts/generate-duckdb-words.ts).
import { PostgreSQL, SQLDialect } from '@codemirror/lang-sql';
import { AGGREGATES, KEYWORDS, SCALARS, TABLE_FUNCTIONS, TYPES } from './duckdbWords.generated.ts';

const words = (s: string) => s.split(' ').filter(Boolean);
const keywordSet = new Set(words(KEYWORDS));
/** DuckDB's functions by name, each with its kind; a name that is also a keyword (LEFT, FILTER) stays a keyword. */
export const FUNCTION_KINDS = new Map<string, 'aggregate' | 'function' | 'table function'>([
  ...words(SCALARS).map((n) => [n, 'function'] as const),
  ...words(TABLE_FUNCTIONS).map((n) => [n, 'table function'] as const),
  ...words(AGGREGATES).map((n) => [n, 'aggregate'] as const),
]);
export const KEYWORD_LIST = words(KEYWORDS);
export const TYPE_LIST = words(TYPES).filter((t) => !keywordSet.has(t));

const { keywords: _k, types: _t, builtin: _b, ...lexical } = PostgreSQL.spec;

export const DuckDBDialect = SQLDialect.define({
  ...lexical,
  keywords: KEYWORD_LIST.join(' '),
  types: TYPE_LIST.join(' '),
  builtin: [...FUNCTION_KINDS.keys()].filter((n) => !keywordSet.has(n)).join(' '),
  doubleDollarQuotedStrings: true,
});
