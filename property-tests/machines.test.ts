// Model-based properties of the six lifecycle machines alone (no host, no database): random event sequences with
// non-decreasing `at`, driven through the host's step (actors/machineStep.ts) exactly as the actor host drives them,
// each step checked against xstate's own pure `transition`.
// PROPERTY_RUNS raises the number of runs per property (default 150) for a longer local run.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { initialTransition, transition } from 'xstate';
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { machineKinds } from '../machines/index.ts';
import { machineStep } from '../actors/machineStep.ts';
import type { MachineKindName } from '../machines/index.ts';
import { machineDefinition } from '../machines/definition.ts';
import { assertNotErrored, effectsOf, persistAndRestore } from '../machines/replay.ts';
import type { ReplayedAction } from '../machines/replay.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

/**
 * An event without its time. `deadline` carries an offset from the persisted deadline (negative: early); a `phase`
 * of CURRENT becomes the migration's current phase; `weight` biases random sequences toward progress.
 */
type Template = { type: string; offset?: number; weight?: number; [key: string]: unknown };
const CURRENT = 'current';

interface Model {
  kind: MachineKindName;
  inputs: fc.Arbitrary<Record<string, unknown>>;
  /** Representative inputs for the exhaustive reachability search. */
  sampleInputs: Record<string, unknown>[];
  alphabet: Template[];
  /** Machine-specific invariant over one transition. */
  check?: (step: Step, history: Step[]) => void;
}

interface Step {
  prev: AnyMachineSnapshot;
  event: { type: string; at: number; [key: string]: unknown };
  next: AnyMachineSnapshot;
  actions: ReplayedAction[];
}

const duration = fc.integer({ min: 1, max: 200_000 });
const T0 = 1_700_000_000_000;

const common: Template[] = [
  { type: 'deadline', offset: -1 },
  { type: 'deadline', offset: 0 },
  { type: 'deadline', offset: 1_000 },
  { type: 'supervisor.failed', reason: 'effect kept failing' },
];

const models: Model[] = [
  {
    kind: 'query',
    inputs: fc.record({
      queryId: fc.constant('q-1'),
      workspace: fc.constant('default'),
      sql: fc.constant('select 1'),
      agentId: fc.constantFrom('agent-1', null),
      at: fc.constant(T0),
      timeoutMs: duration,
      graceMs: duration,
      dispatchAckTimeoutMs: duration,
      computeWaitTimeoutMs: duration,
    }),
    sampleInputs: [
      { queryId: 'q', workspace: 'w', sql: 's', agentId: 'a', at: T0, timeoutMs: 10, graceMs: 5, dispatchAckTimeoutMs: 7, computeWaitTimeoutMs: 9 },
      { queryId: 'q', workspace: 'w', sql: 's', agentId: null, at: T0, timeoutMs: 10, graceMs: 5, dispatchAckTimeoutMs: 7, computeWaitTimeoutMs: 9 },
    ],
    alphabet: [
      ...common,
      { type: 'dispatched' },
      { type: 'dispatchFailed', message: 'socket closed' },
      { type: 'started' },
      { type: 'done', rowCount: 3, durationMs: 12, resultPath: 'results/q-1.parquet', columns: ['a'], columnSchema: [{ name: 'a', type: 'INTEGER' }] },
      { type: 'failed', code: 'engine_error', message: 'Binder Error' },
      { type: 'cancel' },
      { type: 'agentLost' },
      { type: 'computeReady', agentId: 'agent-2' },
    ],
    check: ({ prev, next }, history) => {
      // row_count is set exactly when the query is done.
      expect(next.context.rowCount !== null).toBe(next.value === 'done');
      // A cancelled query never becomes done (nor anything else).
      if (history.some((s) => s.next.value === 'cancelled')) expect(next.value).toBe('cancelled');
      if (next.value === 'failed') expect(next.context.error).toEqual(expect.any(String));
      if (next.value === 'running' && prev.value !== 'running') expect(next.context.agentId).not.toBeNull();
    },
  },
  {
    kind: 'sqlSession',
    inputs: fc.record({
      sessionId: fc.constant('s-1'),
      workspace: fc.constant('default'),
      agentId: fc.constantFrom('agent-1', null),
      at: fc.constant(T0),
      idleTimeoutMs: duration,
      maxLifetimeMs: duration,
      openingDeadlineMs: duration,
      pendingTimeoutMs: duration,
      closeTimeoutMs: duration,
    }),
    sampleInputs: [
      { sessionId: 's', workspace: 'w', agentId: 'a', at: T0, idleTimeoutMs: 50, maxLifetimeMs: 1000, openingDeadlineMs: 20, pendingTimeoutMs: 30, closeTimeoutMs: 10 },
      { sessionId: 's', workspace: 'w', agentId: null, at: T0, idleTimeoutMs: 50, maxLifetimeMs: 1000, openingDeadlineMs: 20, pendingTimeoutMs: 30, closeTimeoutMs: 10 },
      { sessionId: 's', workspace: 'w', agentId: null, at: T0, idleTimeoutMs: 50, maxLifetimeMs: 1000, openingDeadlineMs: 20, pendingTimeoutMs: 100, closeTimeoutMs: 10 },
    ],
    alphabet: [
      ...common,
      { type: 'computeReady', agentId: 'agent-2' },
      { type: 'opened' },
      { type: 'openFailed', code: 'queue_full', message: 'queue full' },
      { type: 'statementSubmitted', statementId: 'st-1' },
      { type: 'statementSubmitted', statementId: 'st-2' },
      { type: 'statementFinished', statementId: 'st-1' },
      { type: 'statementFinished', statementId: 'st-2' },
      { type: 'close' },
      { type: 'closed' },
      { type: 'agentLost' },
      { type: 'agentReconnected' },
    ],
    check: ({ prev, event, next, actions }) => {
      // The agent connecting anew never leaves a session open (the agent dropped it); an opening one asks again.
      if (event.type === 'agentReconnected' && prev.value === 'open') expect(next.value).toBe('failed');
      if (event.type === 'agentReconnected' && prev.value === 'opening') expect(actions.map((a) => a.type)).toEqual(['sendOpenSession']);
      // A statement is accepted only by an open session; every other live state answers session_not_open.
      const accepted = actions.filter((a) => a.type === 'acceptStatement');
      const rejected = actions.filter((a) => a.type === 'rejectStatement');
      if (accepted.length > 0) {
        expect(prev.value).toBe('open');
        expect(next.value).toBe('open');
      }
      if (event.type === 'statementSubmitted' && prev.status === 'active') {
        expect(accepted.length + rejected.length).toBe(1);
        if (prev.value !== 'open') expect(rejected).toHaveLength(1);
      }
      if (event.type !== 'statementSubmitted') expect(accepted).toHaveLength(0);
      if (next.value === 'opening' || next.value === 'open' || next.value === 'closing') expect(next.context.agentId).not.toBeNull();
      // The idle limit never closes a session while a statement runs.
      if (prev.value === 'open' && next.value === 'closing' && next.context.closeReason === 'idle') {
        expect(prev.context.runningStatements).toHaveLength(0);
      }
    },
  },
  {
    kind: 'statement',
    inputs: fc.record({
      statementId: fc.constant('st-1'),
      sessionId: fc.constant('s-1'),
      agentId: fc.constant('agent-1'),
      sql: fc.constant('select 1'),
      at: fc.constant(T0),
      timeoutMs: fc.option(duration, { nil: null }),
      defaultTimeoutMs: duration,
      graceMs: duration,
      ackDeadlineMs: duration,
      ackSupported: fc.boolean(),
    }),
    sampleInputs: [true, false].map((ackSupported) => ({
      statementId: 'st',
      sessionId: 's',
      agentId: 'a',
      sql: 'select 1',
      at: T0,
      timeoutMs: null,
      defaultTimeoutMs: 100,
      graceMs: 10,
      ackDeadlineMs: 15,
      ackSupported,
    })),
    alphabet: [
      ...common,
      { type: 'dispatched' },
      { type: 'ack' },
      { type: 'done', rowCount: 1, durationMs: 3, resultPath: 'results/st-1.parquet', columns: ['x'], columnSchema: [{ name: 'x', type: 'INTEGER' }] },
      { type: 'failed', code: 'engine_error', message: 'boom' },
      { type: 'failed', code: 'cancelled', message: 'statement cancelled' },
      { type: 'cancel' },
      { type: 'cancelAck', found: false },
      { type: 'cancelAck', found: true },
      { type: 'agentLost' },
      { type: 'sessionClosed' },
    ],
    check: ({ prev, event, next, actions }) => {
      expect(next.context.rowCount !== null).toBe(next.value === 'done');
      // A cancel is cancelled only once the agent confirms (or cannot run it any more): never at once.
      if (event.type === 'cancel' && prev.value !== 'cancelled') expect(next.value).not.toBe('cancelled');
      // Every way out tells the session exactly once.
      const told = actions.filter((a) => a.type === 'statementFinished');
      expect(told).toHaveLength(prev.status === 'active' && next.status === 'done' ? 1 : 0);
      // With ack support only the agent's ack starts it; without, the sent frame does.
      if (prev.value === 'queued' && next.value === 'running') {
        expect(event.type).toBe(prev.context.ackSupported ? 'ack' : event.type === 'ack' ? 'ack' : 'dispatched');
      }
    },
  },
  {
    kind: 'agentConnection',
    inputs: fc.record({
      connectionId: fc.constant('c-1'),
      replicaUrl: fc.constant('http://replica-1:8000'),
      resultAddress: fc.constant('http://10.0.0.5:8001'),
      at: fc.constant(T0),
      authTimeoutMs: duration,
      heartbeatIntervalMs: duration,
      heartbeatTtlMs: duration,
      drainTimeoutMs: duration,
    }),
    sampleInputs: [
      { connectionId: 'c', replicaUrl: 'r', resultAddress: null, at: T0, authTimeoutMs: 10, heartbeatIntervalMs: 5, heartbeatTtlMs: 15, drainTimeoutMs: 10 },
    ],
    alphabet: [
      ...common,
      { type: 'authenticated', agentId: 'agent-1', name: 'bundled', version: '0.1.0', resumed: false },
      { type: 'authFailed', code: 'invalid_token', message: 'unknown bootstrap token' },
      { type: 'status', capabilities: { engine_version: 'v1.5.6', memory_limit_bytes: 1024 } },
      { type: 'heartbeat' },
      { type: 'disconnected' },
      { type: 'credentialRevoked' },
      { type: 'drain' },
    ],
    check: ({ prev, event, next, actions }) => {
      if (next.value === 'healthy') {
        expect(next.context.agentId).not.toBeNull();
        expect(next.context.capabilities).not.toBeNull();
      }
      // In-flight work is failed exactly when a registered agent is lost (not on a replica's orderly drain).
      const failed = actions.some((a) => a.type === 'failAgentWork');
      expect(failed).toBe(
        (prev.value === 'registered' || prev.value === 'healthy') && next.value === 'unavailable',
      );
      if (event.type === 'heartbeat' && next.value === 'healthy' && prev.value === 'healthy') {
        expect(next.context.deadlineAt).toBe(event.at + next.context.heartbeatTtlMs);
      }
    },
  },
  {
    kind: 'elasticAgent',
    inputs: fc.record({
      elasticId: fc.constant('e-1'),
      pool: fc.constant('object_store:warehouse'),
      cpu: fc.constant(2),
      memoryGb: fc.constant(4),
      at: fc.constant(T0),
      provisioningDeadlineMs: duration,
      idleTimeoutMs: duration,
      maxLifetimeMs: duration,
      terminateTimeoutMs: duration,
      maxTerminateAttempts: fc.integer({ min: 1, max: 4 }),
    }),
    sampleInputs: [
      { elasticId: 'e', pool: 'p', cpu: 2, memoryGb: 4, at: T0, provisioningDeadlineMs: 30, idleTimeoutMs: 20, maxLifetimeMs: 1000, terminateTimeoutMs: 10, maxTerminateAttempts: 2 },
    ],
    alphabet: [
      ...common,
      { type: 'provisioningStarted', providerRef: 'container-1' },
      { type: 'provisionFailed', message: 'quota exceeded' },
      { type: 'registered', agentId: 'agent-9' },
      { type: 'workChanged', inFlightQueries: 0, openSessions: 0 },
      { type: 'workChanged', inFlightQueries: 2, openSessions: 0 },
      { type: 'workChanged', inFlightQueries: 0, openSessions: 1 },
      { type: 'agentLost' },
      { type: 'terminate' },
      { type: 'terminationConfirmed' },
      { type: 'terminationFailed', message: 'provider 500' },
    ],
    check: ({ prev, event, next }) => {
      // An agent with in-flight work is never idle-terminated (nor stopped by the lifetime backstop before it drains).
      if (next.value === 'terminating' && prev.value !== 'terminating') {
        const reason = next.context.terminationReason;
        if (reason === 'idle' || reason === 'lifetime') {
          expect(next.context.inFlightQueries + next.context.openSessions).toBe(0);
          if (prev.value === 'busy') expect(event).toMatchObject({ type: 'workChanged', inFlightQueries: 0, openSessions: 0 });
        }
      }
      if (next.value === 'idle') expect(next.context.inFlightQueries + next.context.openSessions).toBe(0);
      if (next.value === 'busy') expect(next.context.inFlightQueries + next.context.openSessions).toBeGreaterThan(0);
      if (next.value === 'busy') expect(next.context.deadlineAt).toBeNull();
    },
  },
  {
    kind: 'storageMigration',
    inputs: fc.record({
      migrationId: fc.constant('m-1'),
      catalogId: fc.constant('cat-1'),
      sourceBackendId: fc.constant('b-1'),
      targetBackendId: fc.constant('b-2'),
      at: fc.constant(T0),
      phaseLeaseMs: duration,
      retentionMs: duration,
      maxPhaseAttempts: fc.integer({ min: 1, max: 4 }),
    }),
    sampleInputs: [
      { migrationId: 'm', catalogId: 'c', sourceBackendId: 'a', targetBackendId: 'b', at: T0, phaseLeaseMs: 10, retentionMs: 100, maxPhaseAttempts: 2 },
    ],
    alphabet: [
      ...common,
      { type: 'begin', weight: 4 },
      { type: 'progress', phase: CURRENT, tablesTotal: 4, tablesDone: 3, bytesCopied: 2048, weight: 2 },
      { type: 'phaseDone', phase: CURRENT, weight: 12 },
      { type: 'phaseFailed', phase: CURRENT, message: 'S3 503', retryable: true, weight: 2 },
      { type: 'cancel', weight: 3 },
      ...(['copy', 'rewrite', 'verify', 'cutover', 'purge'] as const).flatMap((phase) => [
        { type: 'progress', phase, tablesTotal: 4, tablesDone: 2, bytesCopied: 1024 },
        { type: 'phaseDone', phase },
        { type: 'phaseFailed', phase, message: 'S3 503', retryable: true },
        { type: 'phaseFailed', phase, message: 'checksum mismatch', retryable: false },
      ]),
      { type: 'resume' },
      { type: 'cancel' },
    ],
    check: ({ prev, event, next, actions }, history) => {
      // Cancel is allowed only before cutover: once cutover began, never cancelled, and the cancel is refused.
      const pastCutover = history.some((s) => s.next.value === 'cuttingOver' || s.next.value === 'retained');
      if (pastCutover) expect(next.value).not.toBe('cancelled');
      if (event.type === 'cancel' && (prev.value === 'cuttingOver' || prev.value === 'retained')) {
        expect(actions.map((a) => a.type)).toEqual(['rejectCancel']);
      }
      // The source data is cleaned up only when the catalog never moved.
      if (actions.some((a) => a.type === 'cleanupTarget')) expect(pastCutover && prev.value !== 'cuttingOver').toBe(false);
      if (next.value === 'completed' && prev.value !== 'completed') expect(prev.value).toBe('retained');
    },
  },
];

const TERMINAL_CHECK_EVENTS = 3;
const PER_STATE = 3;
const FRONTIER_CAP = 1_500;

function toEvent(template: Template, at: number, snapshot: AnyMachineSnapshot): { type: string; at: number } {
  const { offset, weight: _weight, ...rest } = template;
  if (rest.phase === CURRENT) rest.phase = snapshot.context.phase ?? 'copy';
  let time = at;
  if (template.type === 'deadline') {
    const deadlineAt = snapshot.context.deadlineAt as number | null;
    if (deadlineAt !== null && offset !== undefined) time = Math.max(at, deadlineAt + offset);
  }
  return { ...rest, at: time } as { type: string; at: number };
}

function stepsArb(model: Model) {
  const dt = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1, max: 400_000 }));
  const template = fc.oneof(...model.alphabet.map((t) => ({ arbitrary: fc.constant(t), weight: t.weight ?? 1 })));
  return fc.array(fc.tuple(dt, template), { maxLength: 40, size: 'max' });
}

function run(machine: AnyStateMachine, input: Record<string, unknown>, plan: [number, Template][]) {
  const [initial, initialActions] = initialTransition(machine, input);
  assertNotErrored(initial);
  const steps: Step[] = [];
  let snapshot = initial as AnyMachineSnapshot;
  let at = input.at as number;
  for (const [dt, template] of plan) {
    const event = toEvent(template, at + dt, snapshot);
    at = event.at;
    const [next, actions] = machineStep(machine, snapshot, event);
    // The host's step (one inert scope per machine) decides exactly what xstate's transition() decides.
    const [expected, expectedActions] = transition(machine, snapshot, event as any);
    expect(JSON.stringify(machine.getPersistedSnapshot(next))).toBe(JSON.stringify(machine.getPersistedSnapshot(expected)));
    expect(effectsOf(actions)).toEqual(effectsOf(expectedActions));
    // A throwing guard or assign would surface as an error snapshot, which the host must never persist.
    assertNotErrored(next);
    steps.push({ prev: snapshot, event, next: next as AnyMachineSnapshot, actions: effectsOf(actions) });
    snapshot = next as AnyMachineSnapshot;
  }
  return { initial: initial as AnyMachineSnapshot, initialActions: effectsOf(initialActions), steps };
}

function entered(prev: AnyMachineSnapshot, next: AnyMachineSnapshot): boolean {
  return prev.value !== next.value || prev.context.enteredAt !== next.context.enteredAt;
}

for (const model of models) {
  const { machine, project } = machineKinds[model.kind];
  const declaredActions = new Set(Object.keys((machine as any).implementations.actions));

  describe(`${model.kind} machine properties`, () => {
    test('terminal states absorb every event; stale deadlines change nothing; deadlines lie ahead of entry', () => {
      fc.assert(
        fc.property(model.inputs, stepsArb(model), (input, plan) => {
          const { initial, initialActions, steps } = run(machine, input, plan);
          if (initial.context.deadlineAt !== null) expect(initial.context.deadlineAt).toBeGreaterThan(input.at as number);
          for (const a of initialActions) expect(declaredActions.has(a.type)).toBe(true);
          const history: Step[] = [];
          for (const step of steps) {
            const { prev, event, next, actions } = step;
            history.push(step);
            if (prev.status === 'done') {
              expect(next.value).toEqual(prev.value);
              expect(next.context).toEqual(prev.context);
              expect(actions).toEqual([]);
            }
            if (event.type === 'deadline' && (prev.context.deadlineAt === null || event.at < prev.context.deadlineAt)) {
              expect(next.value).toEqual(prev.value);
              expect(next.context).toEqual(prev.context);
              expect(actions).toEqual([]);
            }
            if (entered(prev, next) && next.context.deadlineAt !== null) {
              expect(next.context.deadlineAt).toBeGreaterThan(next.context.enteredAt);
              expect(next.context.enteredAt).toBe(event.at);
            }
            // Effects are declared by name and carry JSON params (the host persists, then runs them by type).
            for (const a of actions) {
              expect(declaredActions.has(a.type)).toBe(true);
              expect(JSON.parse(JSON.stringify(a.params))).toEqual(a.params);
            }
            const projection = project(next);
            expect(projection.terminal).toBe(next.status === 'done');
            expect(projection.deadlineAt).toBe(next.context.deadlineAt);
            if (projection.terminal) expect(projection.deadlineAt).toBeNull();
            model.check?.(step, history);
          }
          // Whatever comes after the end changes nothing.
          const last = steps.at(-1)?.next ?? initial;
          if (last.status === 'done') {
            for (const template of model.alphabet.slice(0, TERMINAL_CHECK_EVENTS)) {
              const [after, actions] = transition(machine, last, toEvent(template, (steps.at(-1)?.event.at ?? T0) + 1, last) as any);
              expect(after).toBe(last);
              expect(actions).toEqual([]);
            }
          }
        }),
        { numRuns: RUNS },
      );
    });

    test('a snapshot persisted as JSON and restored continues exactly like the live one', () => {
      fc.assert(
        fc.property(model.inputs, stepsArb(model), fc.nat(), (input, plan, cut) => {
          const split = plan.length === 0 ? 0 : cut % (plan.length + 1);
          const live = run(machine, input, plan);
          let restored = persistAndRestore(machine, (split === 0 ? live.initial : live.steps[split - 1].next) as any) as AnyMachineSnapshot;
          for (let i = split; i < live.steps.length; i++) {
            const { event, next, actions } = live.steps[i];
            const [after, afterActions] = transition(machine, restored, event as any);
            expect(after.value).toEqual(next.value);
            expect(after.context).toEqual(next.context);
            expect(after.status).toBe(next.status);
            expect(effectsOf(afterActions)).toEqual(actions);
            restored = after as AnyMachineSnapshot;
          }
        }),
        { numRuns: Math.max(20, Math.floor(RUNS / 2)) },
      );
    });

    test('every declared state is reachable over the event alphabet', () => {
      const def = machineDefinition(machine);
      const wanted = new Set(def.states.filter((s) => !s.transient).map((s) => s.name));
      const seen = new Set<string>();
      const dts = [0, 1, 50, 100_000];
      // Breadth-first from every sample input at once, until every state has been seen.
      let frontier: { snapshot: AnyMachineSnapshot; at: number }[] = model.sampleInputs.map((input) => ({
        snapshot: initialTransition(machine, input as any)[0] as AnyMachineSnapshot,
        at: T0,
      }));
      const visited = new Set<string>();
      const perState = new Map<string, number>();
      for (let depth = 0; depth < 12 && frontier.length > 0 && [...wanted].some((s) => !seen.has(s)); depth++) {
        const nextFrontier: typeof frontier = [];
        for (const { snapshot, at } of frontier) {
          seen.add(String(snapshot.value));
          if (snapshot.status === 'done') continue;
          for (const template of model.alphabet) {
            for (const dt of template.type === 'deadline' ? [0] : dts) {
              const event = toEvent(template, at + dt, snapshot);
              const [next] = transition(machine, snapshot, event as any);
              const key = `${String(next.value)}|${JSON.stringify(next.context)}`;
              if (visited.has(key)) continue;
              visited.add(key);
              seen.add(String(next.value));
              // Time makes contexts endless: keep a bounded sample per state and timeless context.
              const coarse = `${String(next.value)}|${JSON.stringify(
                Object.entries(next.context).filter(([k]) => !/(At|Since|Until)$/.test(k)),
              )}`;
              const kept = perState.get(coarse) ?? 0;
              if (kept >= PER_STATE || nextFrontier.length >= FRONTIER_CAP) continue;
              perState.set(coarse, kept + 1);
              nextFrontier.push({ snapshot: next as AnyMachineSnapshot, at: event.at });
            }
          }
        }
        frontier = nextFrontier;
      }
      expect([...wanted].filter((s) => !seen.has(s))).toEqual([]);
    });
  });
}
