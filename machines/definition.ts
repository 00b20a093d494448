// A plain-data description of a machine (states, events, transitions) read from the real machine object, for the
// operators' state-chart inspection and the diagrams. Never hand-written, so it cannot drift from the machine.
import type { AnyStateMachine } from 'xstate';

export interface StateDefinition {
  /** Dotted path below the root (flat machines: the state's key). */
  name: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** A state left at once by eventless (`always`) transitions: never at rest in a snapshot. */
  transient: boolean;
  description?: string;
  entry: string[];
  exit: string[];
}

export interface TransitionDefinition {
  /** Source state name; `*` for a transition declared on the root (any state). */
  from: string;
  /** Event type; `always` for an eventless transition (`eventless` is then true). */
  event: string;
  /** Target state name; equals `from` for a targetless transition (`targetless` is then true). */
  to: string;
  guard?: string;
  actions: string[];
  targetless: boolean;
  reenter: boolean;
  eventless: boolean;
}

export interface MachineDefinition {
  id: string;
  description?: string;
  initial: string;
  states: StateDefinition[];
  /** Every event type some transition handles, sorted. */
  events: string[];
  transitions: TransitionDefinition[];
}

interface NodeLike {
  id: string;
  key: string;
  type: StateDefinition['type'];
  path: string[];
  description?: string;
  states: Record<string, NodeLike>;
  entry: unknown[];
  exit: unknown[];
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
  initial?: { target: NodeLike[] };
  config: { initial?: unknown };
}

interface TransitionLike {
  eventType: string;
  target?: NodeLike[];
  guard?: unknown;
  actions: unknown[];
  reenter: boolean;
}

/** The readable name of an action or guard reference: its `type`, or xstate's built-in name without the prefix. */
function referenceName(ref: unknown): string {
  if (typeof ref === 'string') return ref;
  if (typeof ref === 'function') {
    const type = (ref as { type?: unknown }).type;
    if (typeof type === 'string') return type.replace(/^xstate\./, '');
    return ref.name || 'inline';
  }
  if (ref && typeof ref === 'object') {
    const type = (ref as { type?: unknown }).type;
    if (typeof type === 'string') return type.replace(/^xstate\./, '');
  }
  return 'inline';
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'function' || typeof guard === 'object') {
    const g = guard as { type?: unknown; guards?: unknown; check?: unknown };
    // and()/or()/not() carry their operands.
    const operands = (g as { guards?: unknown[] }).guards;
    const type = typeof g.type === 'string' ? g.type : undefined;
    if (Array.isArray(operands) && type) {
      const op = type.replace(/^xstate\./, '');
      if (op === 'not') return `!${guardName(operands[0])}`;
      return operands.map(guardName).join(op === 'and' ? ' && ' : ' || ');
    }
  }
  return referenceName(guard);
}

function nameOf(node: NodeLike): string {
  return node.path.join('.');
}

function collectNodes(node: NodeLike, into: NodeLike[]): void {
  for (const child of Object.values(node.states)) {
    into.push(child);
    collectNodes(child, into);
  }
}

function describeTransition(from: string, t: TransitionLike, eventless: boolean): TransitionDefinition {
  const targets = t.target ?? [];
  const guard = guardName(t.guard);
  const def: TransitionDefinition = {
    from,
    event: eventless ? 'always' : t.eventType,
    to: targets.length === 0 ? from : targets.map(nameOf).join(','),
    actions: t.actions.map(referenceName),
    targetless: targets.length === 0,
    reenter: t.reenter === true,
    eventless,
  };
  if (guard !== undefined) def.guard = guard;
  return def;
}

/** Reads states and transitions from `machine.root` and its state nodes. */
export function machineDefinition(machine: AnyStateMachine): MachineDefinition {
  const root = machine.root as unknown as NodeLike;
  const nodes: NodeLike[] = [];
  collectNodes(root, nodes);

  const states: StateDefinition[] = nodes.map((node) => {
    const always = node.always ?? [];
    const def: StateDefinition = {
      name: nameOf(node),
      type: node.type,
      transient: always.length > 0 && node.transitions.size === 0,
      entry: node.entry.map(referenceName),
      exit: node.exit.map(referenceName),
    };
    if (node.description) def.description = node.description;
    return def;
  });

  const transitions: TransitionDefinition[] = [];
  for (const node of [root, ...nodes]) {
    const from = node === root ? '*' : nameOf(node);
    for (const [, list] of node.transitions) {
      for (const t of list) transitions.push(describeTransition(from, t, false));
    }
    for (const t of node.always ?? []) transitions.push(describeTransition(from, t, true));
  }

  const initialTargets = root.initial?.target ?? [];
  const events = [...new Set(transitions.filter((t) => !t.eventless).map((t) => t.event))].sort();
  const def: MachineDefinition = {
    id: machine.id,
    initial: initialTargets.length > 0 ? initialTargets.map(nameOf).join(',') : String(root.config.initial ?? ''),
    states,
    events,
    transitions,
  };
  if (root.description) def.description = root.description;
  return def;
}
