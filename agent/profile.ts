// Turn DuckDB's JSON profiling output into the protocol's normalized profile (summary + operator tree).
// Best effort: anything unexpected yields null, and the query still succeeds.
import type { ProfileOperator, QueryProfile } from '../protocol/index.ts';

type Json = Record<string, unknown>;

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** The planner's row estimate DuckDB puts in an operator's extra_info (a decimal string), when there is one. */
function estimatedCardinality(node: Json): number | undefined {
  const info = node.extra_info;
  if (typeof info !== 'object' || info === null) return undefined;
  const text = (info as Json)['Estimated Cardinality'];
  const n = typeof text === 'string' && /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

function operator(node: Json): ProfileOperator {
  const kids = Array.isArray(node.children) ? (node.children as unknown[]) : [];
  const estimate = estimatedCardinality(node);
  return {
    name: String(node.operator_name ?? node.operator_type ?? 'UNKNOWN').trim(),
    timing_ms: num(node.operator_timing) * 1000,
    cardinality: Math.round(num(node.operator_cardinality)),
    ...(estimate === undefined ? {} : { estimated_cardinality: estimate }),
    children: kids.filter((k): k is Json => typeof k === 'object' && k !== null).map(operator),
  };
}

/** Normalize one DuckDB JSON profile. `rows` is the statement's row count as the agent reports it. */
export function normalizeProfile(text: string, rows: number): QueryProfile | null {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return null;
  const r = root as Json;
  const kids = Array.isArray(r.children) ? (r.children as unknown[]).filter((k): k is Json => typeof k === 'object' && k !== null) : [];
  const peak = r.system_peak_buffer_memory;
  return {
    summary: {
      total_ms: num(r.latency) * 1000,
      rows,
      peak_memory_bytes: typeof peak === 'number' && Number.isFinite(peak) && peak >= 0 ? Math.round(peak) : null,
      cpu_ms: num(r.cpu_time) * 1000,
    },
    operators: kids.length === 0 ? null : kids.length === 1 ? operator(kids[0]) : { name: 'QUERY', timing_ms: num(r.latency) * 1000, cardinality: rows, children: kids.map(operator) },
  };
}
