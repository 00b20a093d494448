// A small machine that follows the lifecycle-machine contract (pure, named actions with params, deadlines in
// context, `deadline` and `supervisor.failed` events), used to test and benchmark the actor host on its own.
// Every `add` changes the context (its `n` is appended), so each accepted event leaves exactly one transition.
import { assign, setup } from 'xstate';
import type { Projection } from '../types.ts';

export interface LedgerContext {
  owner: string;
  entries: number[];
  total: bigint;
  deadlineAt: number | null;
  error: string | null;
  apiToken: string;
}

export type LedgerEvent =
  | { type: 'add'; n: number; at: number }
  | { type: 'arm'; ms: number; at: number }
  | { type: 'deadline'; at: number }
  | { type: 'poke'; at: number }
  | { type: 'explode'; at: number }
  | { type: 'close'; at: number }
  | { type: 'supervisor.failed'; reason: string; at: number };

export const ledgerMachine = setup({
  types: {} as { context: LedgerContext; events: LedgerEvent; input: { owner: string; apiToken?: string } },
  actions: {
    recordEntry: (_, _params: { n: number }) => {},
    announceClosed: (_, _params: { total: string }) => {},
  },
}).createMachine({
  id: 'ledger',
  initial: 'open',
  context: ({ input }) => ({
    owner: input.owner,
    entries: [],
    total: 0n,
    deadlineAt: null,
    error: null,
    apiToken: input.apiToken ?? '',
  }),
  on: {
    'supervisor.failed': { target: '.failed', actions: assign({ error: ({ event }) => event.reason, deadlineAt: null }) },
  },
  states: {
    open: {
      on: {
        add: {
          actions: [
            assign({
              entries: ({ context, event }) => [...context.entries, event.n],
              // A BigInt beyond 2^53 checks that snapshots keep large integers exact.
              total: ({ context, event }) => context.total + 9007199254740993n * BigInt(event.n),
            }),
            { type: 'recordEntry', params: ({ event }) => ({ n: event.n }) },
          ],
        },
        arm: { actions: assign({ deadlineAt: ({ event }) => event.at + event.ms }) },
        deadline: {
          guard: ({ context, event }) => context.deadlineAt !== null && event.at >= context.deadlineAt,
          target: 'expired',
          actions: assign({ deadlineAt: null }),
        },
        explode: {
          actions: assign(() => {
            throw new Error('ledger exploded');
          }),
        },
        close: {
          target: 'closed',
          actions: [assign({ deadlineAt: null }), { type: 'announceClosed', params: ({ context }) => ({ total: context.total.toString() }) }],
        },
      },
    },
    closed: { type: 'final' },
    expired: { type: 'final' },
    failed: { type: 'final' },
  },
});

export function projectLedger(snapshot: { value: unknown; context: LedgerContext }): Projection {
  const state = String(snapshot.value);
  const terminal = state === 'closed' || state === 'expired' || state === 'failed';
  return { status: state, deadlineAt: snapshot.context.deadlineAt, terminal, error: snapshot.context.error };
}
