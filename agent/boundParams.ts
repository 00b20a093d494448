// A statement's `$n` values as DuckDB binds them: text (DuckDB casts it to the type its position asks for), or the
// type the client declared (the wire endpoint's Parse) where the position cannot tell (`SELECT 40 + $1`).
import { BIGINT, BOOLEAN, DOUBLE, VARCHAR, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import type { ParamType } from '../protocol/index.ts';

export interface BoundParams {
  values: DuckDBValue[];
  types: DuckDBType[];
}

const DUCK_TYPES: Record<ParamType, DuckDBType> = { BIGINT, DOUBLE, BOOLEAN };
// PostgreSQL's spellings of a boolean's text form (a client sends what its server would accept).
const TRUE = new Set(['t', 'true', 'y', 'yes', 'on', '1']);
const FALSE = new Set(['f', 'false', 'n', 'no', 'off', '0']);

/** `params` bound as `types` declares them (text where it declares nothing); a value its type refuses is an error. */
export function boundParams(params: readonly (string | null)[], types: readonly (ParamType | null)[] = []): BoundParams {
  const values: DuckDBValue[] = [];
  const duckTypes: DuckDBType[] = [];
  params.forEach((text, i) => {
    const type = types[i] ?? null;
    duckTypes.push(type ? DUCK_TYPES[type] : VARCHAR);
    values.push(text === null || type === null ? text : valueOf(text, type, i + 1));
  });
  return { values, types: duckTypes };
}

function valueOf(text: string, type: ParamType, n: number): DuckDBValue {
  const t = text.trim();
  const refuse = () => new Error(`Conversion Error: parameter $${n} was declared ${type}, and ${JSON.stringify(text.slice(0, 50))} is not one`);
  switch (type) {
    case 'BIGINT': {
      if (!/^[+-]?\d+$/.test(t)) throw refuse();
      const v = BigInt(t);
      if (v > 9223372036854775807n || v < -9223372036854775808n) throw refuse();
      return v;
    }
    case 'DOUBLE': {
      const v = /^[+-]?(infinity|inf)$/i.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : /^nan$/i.test(t) ? NaN : Number(t);
      if (t === '' || (Number.isNaN(v) && !/^nan$/i.test(t))) throw refuse();
      return v;
    }
    case 'BOOLEAN': {
      const lower = t.toLowerCase();
      if (TRUE.has(lower)) return true;
      if (FALSE.has(lower)) return false;
      throw refuse();
    }
  }
}
