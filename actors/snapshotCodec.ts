// The persisted form of an actor's snapshot: JSON of { value, context, status }. Plain JSON would turn a BigInt
// into a TypeError and a Date into a string that never comes back as a Date, so both travel tagged and are revived
// on load; PostgreSQL stores the text as jsonb and the host reads it back as text (never through a lossy parse).
import type { AnyMachineSnapshot, AnyStateMachine, SnapshotStatus, StateValue } from 'xstate';

export interface PersistedSnapshot {
  value: StateValue;
  context: Record<string, unknown>;
  status: string;
}

const BIGINT_TAG = '$bigint';
const DATE_TAG = '$date';

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (typeof raw === 'bigint') return { [BIGINT_TAG]: raw.toString() };
  if (raw instanceof Date) return { [DATE_TAG]: raw.toISOString() };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const tagged = value as Record<string, unknown>;
    const keys = Object.keys(tagged);
    if (keys.length === 1) {
      const bigint = tagged[BIGINT_TAG];
      const date = tagged[DATE_TAG];
      if (keys[0] === BIGINT_TAG && typeof bigint === 'string') return BigInt(bigint);
      if (keys[0] === DATE_TAG && typeof date === 'string') return new Date(date);
    }
  }
  return value;
}

/** JSON text with BigInt and Date tagged; usable for any value the host persists (snapshots, event payloads). */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value, replacer);
}

export function decodeJson<T = unknown>(text: string): T {
  return JSON.parse(text, reviver) as T;
}

/** `omit`: context keys kept elsewhere (the entity's own row), left out of the persisted form. */
export function encodeSnapshot(snapshot: AnyMachineSnapshot, omit: readonly string[] = []): string {
  const persisted: PersistedSnapshot = { value: snapshot.value, context: withoutKeys(snapshot.context ?? {}, omit), status: snapshot.status };
  return encodeJson(persisted);
}

/** `external`: the omitted context keys, read back from where they are kept. */
export function decodeSnapshot(machine: AnyStateMachine, text: string, external: Record<string, unknown> | null = null): AnyMachineSnapshot {
  const p = decodeJson<PersistedSnapshot>(text);
  return machine.resolveState({ value: p.value, context: { ...p.context, ...(external ?? {}) }, status: p.status as SnapshotStatus }) as AnyMachineSnapshot;
}

export function withoutKeys<T>(value: T, omit: readonly string[]): T {
  if (!omit.length || !value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const k of omit) delete out[k];
  return out as T;
}

/** The state value as one string: `running`, `open.busy`, parallel regions joined with `,`. */
export function stateName(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.entries(value)
    .map(([k, v]) => {
      if (v === undefined) return k;
      const inner = stateName(v as StateValue);
      return inner.includes(',') ? inner.split(',').map((s) => `${k}.${s}`).join(',') : `${k}.${inner}`;
    })
    .join(',');
}
