// The live agent-socket registry of this replica: an index of open sockets, never a source of truth (the agents
// table and the connection actors are). It also holds, in memory only, the agent's session token, which the api
// presents as Bearer when it reads result files from that agent: the database keeps only its hash.

export interface OutboundFrame {
  type: string;
  payload: unknown;
}

export interface LiveConnection {
  connectionId: string;
  agentId: string | null;
  /** The agent session token presented or issued on this socket (memory only). */
  sessionToken: string | null;
  /** Set when a session token was issued during this auth (sent once in auth_ok). */
  issuedToken: string | null;
  resultUrl: string | null;
  send(frame: OutboundFrame): boolean;
  close(code: number, reason: string): void;
}

const MAX_REMEMBERED_DISPATCHES = 100_000;

/** Where a dispatched query runs: its agent, and its SQL session when it is a session's statement. */
export interface Placement {
  agentId: string;
  sessionId: string | null;
}

export class AgentSockets {
  private readonly connections = new Map<string, LiveConnection>();
  private readonly byAgent = new Map<string, string>();
  /** query or session statement → its agent and session, for what this replica dispatched and has not heard the end
   *  of (saves a lookup a frame) */
  private readonly dispatches = new Map<string, Placement>();

  rememberDispatch(queryId: string, agentId: string, sessionId: string | null = null) {
    this.dispatches.set(queryId, { agentId, sessionId });
    if (this.dispatches.size > MAX_REMEMBERED_DISPATCHES) this.dispatches.delete(this.dispatches.keys().next().value!);
  }

  /** The agent a query (or a session statement) was dispatched to from here, if this replica still remembers it. */
  dispatchedTo(queryId: string): Placement | undefined {
    return this.dispatches.get(queryId);
  }

  forgetDispatch(queryId: string) {
    this.dispatches.delete(queryId);
  }

  addConnection(conn: LiveConnection) {
    this.connections.set(conn.connectionId, conn);
  }

  connection(connectionId: string): LiveConnection | undefined {
    return this.connections.get(connectionId);
  }

  /** Binds an authenticated connection to its agent; an older socket of the same agent is returned for closing. */
  bind(agentId: string, connectionId: string): LiveConnection | undefined {
    const conn = this.connections.get(connectionId);
    if (!conn) return undefined;
    conn.agentId = agentId;
    const previous = this.byAgent.get(agentId);
    this.byAgent.set(agentId, connectionId);
    return previous && previous !== connectionId ? this.connections.get(previous) : undefined;
  }

  unbind(agentId: string, connectionId: string) {
    if (this.byAgent.get(agentId) === connectionId) this.byAgent.delete(agentId);
  }

  removeConnection(connectionId: string) {
    const conn = this.connections.get(connectionId);
    if (conn?.agentId) this.unbind(conn.agentId, connectionId);
    this.connections.delete(connectionId);
  }

  /** The live, authenticated socket of an agent on this replica. */
  agent(agentId: string): LiveConnection | undefined {
    const id = this.byAgent.get(agentId);
    return id ? this.connections.get(id) : undefined;
  }

  liveAgentIds(): string[] {
    return [...this.byAgent.keys()];
  }

  all(): LiveConnection[] {
    return [...this.connections.values()];
  }
}
