// The registry of lifecycle machines, keyed by the kind name the actor host stores in its rows.
import type { AnyStateMachine } from 'xstate';
import type { MachineProjection } from './contract.ts';
import { agentConnectionMachine, projectAgentConnection } from './agentConnection.ts';
import { elasticAgentMachine, projectElasticAgent } from './elasticAgent.ts';
import { projectQuery, queryMachine } from './query.ts';
import { projectSqlSession, sqlSessionMachine } from './sqlSession.ts';
import { projectStatement, statementMachine } from './statement.ts';
import { projectStorageMigration, storageMigrationMachine } from './storageMigration.ts';

export interface MachineKind<P extends MachineProjection = MachineProjection> {
  machine: AnyStateMachine;
  /** The columns written beside the snapshot (status, deadline, terminal, …) from a snapshot or `{value, context}`. */
  project: (snapshot: { value: unknown; context: never }) => P; // each kind reads its own context
  description: string;
}

export const machineKinds = {
  query: {
    machine: queryMachine,
    project: projectQuery,
    description: 'A submitted query: queued (or awaiting elastic compute), running, done, failed, cancelled.',
  },
  sqlSession: {
    machine: sqlSessionMachine,
    project: projectSqlSession,
    description: 'A SQL session: pending compute, opening, open, closing, closed, failed; idle and lifetime limits.',
  },
  statement: {
    machine: statementMachine,
    project: projectStatement,
    description: 'A statement of a SQL session: queued, running, done, failed, cancelled; ack and timeout deadlines.',
  },
  agentConnection: {
    machine: agentConnectionMachine,
    project: projectAgentConnection,
    description: 'An agent socket: authenticating, registered, healthy, draining, unavailable; heartbeat expiry.',
  },
  elasticAgent: {
    machine: elasticAgentMachine,
    project: projectElasticAgent,
    description: 'An agent provisioned on demand: requested, provisioning, registered, idle, busy, terminating, terminated, failed.',
  },
  storageMigration: {
    machine: storageMigrationMachine,
    project: projectStorageMigration,
    description: 'A catalog storage migration: pending, copy, rewrite, verify, cutover, retained, completed, cancelled, failed.',
  },
} satisfies Record<string, MachineKind>;

export type MachineKindName = keyof typeof machineKinds;

export const machineKindNames = Object.keys(machineKinds) as MachineKindName[];

export type { MachineProjection, Json } from './contract.ts';
export type { QueryEvent, QueryProjection } from './query.ts';
export type { SqlSessionEvent } from './sqlSession.ts';
export type { StatementEvent } from './statement.ts';
export type { AgentConnectionEvent } from './agentConnection.ts';
export type { ElasticAgentEvent } from './elasticAgent.ts';
export type { StorageMigrationEvent } from './storageMigration.ts';
