// Replays events through a machine with xstate's pure transition functions, exactly as the actor host drives it
// (nothing executed; effects come back as data). Used by tests, and by tools that rebuild a state from history.
import { initialTransition, transition } from 'xstate';
import type { AnyMachineSnapshot, AnyStateMachine, EventFromLogic, InputFrom, SnapshotFrom } from 'xstate';

export interface ReplayedAction {
  type: string;
  params: unknown;
}

export interface ReplayStep<M extends AnyStateMachine> {
  event: EventFromLogic<M> | null;
  snapshot: SnapshotFrom<M>;
  actions: ReplayedAction[];
}

/** Effects as the host sees them: `type` and `params` only. */
export function effectsOf(actions: readonly { type: string; params?: unknown }[]): ReplayedAction[] {
  return actions.map((a) => ({ type: a.type, params: a.params ?? null }));
}

/**
 * xstate does not throw from a pure transition: a throwing context factory, guard or assign yields a snapshot with
 * status 'error'. Such a snapshot must never be persisted; the host (like this replay) raises its error instead.
 */
export function assertNotErrored(snapshot: { status: string; error?: unknown }): void {
  if (snapshot.status === 'error') throw snapshot.error instanceof Error ? snapshot.error : new Error(String(snapshot.error));
}

/** The initial step (event null), then one step per event. */
export function replay<M extends AnyStateMachine>(
  machine: M,
  input: InputFrom<M>,
  events: readonly EventFromLogic<M>[],
): ReplayStep<M>[] {
  const [first, firstActions] = initialTransition(machine, input);
  assertNotErrored(first);
  const steps: ReplayStep<M>[] = [{ event: null, snapshot: first as SnapshotFrom<M>, actions: effectsOf(firstActions) }];
  let snapshot = first as AnyMachineSnapshot;
  for (const event of events) {
    const [next, actions] = transition(machine, snapshot as SnapshotFrom<M>, event);
    assertNotErrored(next);
    steps.push({ event, snapshot: next as SnapshotFrom<M>, actions: effectsOf(actions) });
    snapshot = next as AnyMachineSnapshot;
  }
  return steps;
}

/** What the host persists: value and context as JSON; `resolveState` restores it. */
export function persistAndRestore<M extends AnyStateMachine>(machine: M, snapshot: SnapshotFrom<M>): SnapshotFrom<M> {
  const s = snapshot as unknown as { value: unknown; context: unknown };
  const stored = JSON.parse(JSON.stringify({ value: s.value, context: s.context })) as Parameters<M['resolveState']>[0];
  return machine.resolveState(stored) as SnapshotFrom<M>;
}
