// DuckDB's SQL for the editor: CodeMirror ships no DuckDB dialect, so this one extends PostgreSQL's (which DuckDB's
// parser descends from) with DuckDB's own keywords, types and common functions, for highlighting and completion.
import { PostgreSQL, SQLDialect } from '@codemirror/lang-sql';

const duckKeywords =
  'anti asof attach checkpoint columns copy describe detach exclude export force glob ilike import install load ' +
  'macro pivot unpivot positional pragma qualify replace sample semi show summarize struct_pack using ' +
  'materialized recursive returning lambda map union_by_name by_name';

const duckTypes =
  'bigint blob boolean date decimal double float hugeint integer interval json list map smallint struct time ' +
  'timestamp timestamptz tinyint ubigint uhugeint uinteger usmallint utinyint union uuid varchar bit enum ' +
  'timestamp_s timestamp_ms timestamp_ns';

const duckBuiltins =
  'read_parquet read_csv read_csv_auto read_json read_json_auto parquet_schema parquet_metadata glob ' +
  'list_value list_aggregate list_transform list_filter unnest generate_series range struct_extract ' +
  'string_agg array_agg approx_count_distinct median quantile_cont quantile_disc mode arg_max arg_min ' +
  'epoch epoch_ms strftime strptime date_trunc date_part datediff date_diff regexp_matches regexp_replace ' +
  'regexp_extract string_split concat_ws coalesce ifnull nullif greatest least hash md5 sha256 ' +
  'current_date current_timestamp now today typeof columns';

const base = PostgreSQL.spec;

export const DuckDBDialect = SQLDialect.define({
  ...base,
  keywords: `${base.keywords ?? ''} ${duckKeywords}`,
  types: `${base.types ?? ''} ${duckTypes}`,
  builtin: `${base.builtin ?? ''} ${duckBuiltins}`,
  doubleDollarQuotedStrings: true,
});
