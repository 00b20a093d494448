// @vitest-environment happy-dom
// The web app's side of elastic compute against a stand-in api: the Compute screen (the note when it is off, the
// list with cost and reason, Stop / Start again by state, the start form's request, polling only while an agent is
// between states and never after unmount), the worksheet's pool choice, and the status pill's "waiting for compute".
import { describe, expect, it, vi } from 'vitest';
import { act } from 'react';
import type { ReactNode } from 'react';
import type { Agent, ComputeOption, ElasticInfo, QueryOut, User } from '../api/types.ts';
import { SessionContext } from '../app/session.tsx';
import { COMPUTE_POLL_MS, ComputeScreen } from './ComputeScreen.tsx';
import { AgentPicker, POOL, agentIdOf } from '../worksheet/AgentPicker.tsx';
import { StatusPill } from '../worksheet/StatusPill.tsx';
import { byRoute, standInApi, type Route } from '../testing/standInApi.ts';
import { testRoot } from '../testing/testRoot.ts';


const admin = { id: 'u1', email: 'a@example.com', name: 'Ada', role: 'admin', auth_provider: 'local', is_active: true, permissions: [], created_at: '2026-01-01T00:00:00Z' } as User;
const member = { ...admin, id: 'u2', role: 'member', permissions: [] } as User;

const sizes: ComputeOption[] = [
  { size: 'small', cpu: 0.5, memory_gb: 1, hourly_cost: 0.05, currency: 'USD' },
  { size: 'medium', cpu: 1, memory_gb: 2, hourly_cost: null, currency: 'USD' },
];

function agent(id: string, status: Agent['status'], elastic: Partial<ElasticInfo> | null, tier: Agent['access_tier'] = 'admin'): Agent {
  return {
    id,
    name: `agent-${id}`,
    status,
    version: null,
    capabilities: {},
    access_tier: tier,
    access_mode: 'open',
    owner_url: null,
    connection_id: null,
    connected_at: null,
    last_heartbeat_at: null,
    elastic: elastic
      ? { state: 'running', provider: 'process', size: 'small', reason: null, provisioned_at: null, terminated_at: null, hourly_cost: null, ...elastic }
      : null,
  };
}

/** A stand-in api: answers by method and path (a POST with 202), recording every request. */
const serve = (routes: Record<string, Route>) => standInApi(byRoute(routes), { postStatus: 202 });

const root = testRoot();

async function mount(node: ReactNode, user: User = admin) {
  const host = await root.mount(<SessionContext.Provider value={{ user, workspaces: [], refresh: async () => {}, signOut: async () => {} }}>{node}</SessionContext.Provider>);
  // let the stand-in's answers land
  await act(async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  });
  return host;
}

const button = (row: Element, label: string) => [...row.querySelectorAll('button')].find((b) => b.textContent === label) as HTMLButtonElement;

describe('Compute screen', () => {
  it('says plainly that elastic compute is off when there are no compute options', async () => {
    serve({ 'GET /api/agents': () => [agent('a', 'healthy', null)], 'GET /api/admin/agents/compute-options': () => [] });
    const host = await mount(<ComputeScreen />);
    expect(host.textContent).toContain('Elastic compute is off (ELASTIC_COMPUTE_ENABLED)');
    expect(host.querySelector('form[aria-label="Start an elastic agent"]')).toBeNull();
    expect(host.textContent).toContain('No elastic agents.');
  });

  it('lists elastic agents with cost, reason and the actions their state allows', async () => {
    serve({
      'GET /api/agents': () => [
        agent('plain', 'healthy', null),
        agent('run', 'healthy', { state: 'running', hourly_cost: 0.05 }),
        agent('end', 'unavailable', { state: 'terminated', reason: 'idle', size: 'medium' }),
      ],
      'GET /api/admin/agents/compute-options': () => sizes,
    });
    const host = await mount(<ComputeScreen />);
    const rows = [...host.querySelectorAll('table[aria-label="Elastic agents"] tbody tr')];
    expect(rows.map((r) => r.getAttribute('data-state'))).toEqual(['running', 'terminated']);
    expect(rows[0].textContent).toContain('$0.05/h');
    expect(rows[1].textContent).toContain('—');
    expect(rows[1].textContent).toContain('idle: no work within the idle timeout');
    expect(button(rows[0], 'Stop').disabled).toBe(false);
    expect(button(rows[0], 'Start again').disabled).toBe(true);
    expect(button(rows[1], 'Stop').disabled).toBe(true);
    expect(button(rows[1], 'Start again').disabled).toBe(false);
    const sizeOptions = [...host.querySelectorAll('form[aria-label="Start an elastic agent"] select')[0].querySelectorAll('option')].map((o) => o.textContent);
    expect(sizeOptions).toEqual(['small — 0.5 CPU · 1 GB · $0.05/h', 'medium — 1 CPU · 2 GB · —']);
  });

  it('starts an agent with the chosen size, name and access mode, and restarts a stopped one', async () => {
    const calls = serve({
      'GET /api/agents': () => [agent('end', 'unavailable', { state: 'failed', reason: 'provisioning_failed' })],
      'GET /api/admin/agents/compute-options': () => sizes,
      'POST /api/admin/agents/elastic': (b) => agent('new', 'unavailable', { state: 'provisioning', size: b.size }),
      'POST /api/admin/agents/end/restart': () => agent('end', 'unavailable', { state: 'provisioning' }),
    });
    const host = await mount(<ComputeScreen />);
    const form = host.querySelector('form[aria-label="Start an elastic agent"]') as HTMLFormElement;
    const [size, mode] = [...form.querySelectorAll('select')] as HTMLSelectElement[];
    expect(size.value).toBe('medium');
    await act(async () => {
      size.value = 'small';
      size.dispatchEvent(new Event('change', { bubbles: true }));
      mode.value = 'restricted';
      mode.dispatchEvent(new Event('change', { bubbles: true }));
      const name = form.querySelector('input') as HTMLInputElement;
      // React tracks the input's value; set it through the native setter so the change event carries it
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(name, 'nightly');
      name.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await act(async () => {
      form.requestSubmit();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    });
    const post = calls.find((c) => c.method === 'POST');
    expect(post && { method: post.method, path: post.path, body: post.body }).toEqual({ method: 'POST', path: '/api/admin/agents/elastic', body: { size: 'small', name: 'nightly', access_mode: 'restricted' } });
    expect(host.textContent).toContain('Started agent-new: provisioning.');
    const row = host.querySelector('table[aria-label="Elastic agents"] tbody tr')!;
    await act(async () => {
      button(row, 'Start again').click();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    });
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/admin/agents/end/restart')).toBe(true);
  });

  it('the "Started" line follows the agent: provisioning becomes running once it dials home', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let state: ElasticInfo['state'] = 'provisioning';
    let started = false;
    serve({
      'GET /api/agents': () => (started ? [agent('new', state === 'running' ? 'healthy' : 'unavailable', { state })] : []),
      'GET /api/admin/agents/compute-options': () => sizes,
      'POST /api/admin/agents/elastic': () => {
        started = true;
        return agent('new', 'unavailable', { state });
      },
    });
    const host = await mount(<ComputeScreen />);
    const settle = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    await act(async () => {
      (host.querySelector('form[aria-label="Start an elastic agent"]') as HTMLFormElement).requestSubmit();
      await settle();
    });
    expect(host.querySelector('p[role=status]')?.textContent).toBe('Started agent-new: provisioning.');
    state = 'running';
    await act(async () => {
      vi.advanceTimersByTime(COMPUTE_POLL_MS);
      await settle();
    });
    expect(host.querySelector('p[role=status]')?.textContent).toBe('Started agent-new: running.');
  });

  it('polls while an agent is provisioning or terminating, stops when it settles, and never after unmount', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    vi.stubGlobal('confirm', () => true);
    let state: ElasticInfo['state'] = 'provisioning';
    const calls = serve({
      'GET /api/agents': () => [agent('p', 'unavailable', { state })],
      'GET /api/admin/agents/compute-options': () => sizes,
      'POST /api/admin/agents/p/terminate': () => {
        state = 'terminating';
        return agent('p', 'unavailable', { state });
      },
    });
    const host = await mount(<ComputeScreen />);
    const reads = () => calls.filter((c) => c.path === '/api/agents').length;
    const settle = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    const tick = async () =>
      act(async () => {
        vi.advanceTimersByTime(COMPUTE_POLL_MS);
        await settle();
      });
    expect(reads()).toBe(1);
    await tick();
    expect(reads()).toBe(2);
    state = 'running';
    await tick();
    expect(reads()).toBe(3);
    expect(host.querySelector('tbody tr')?.getAttribute('data-state')).toBe('running');
    await tick();
    expect(reads()).toBe(3);
    expect(vi.getTimerCount()).toBe(0);

    // Stop: terminating, so polled again; unmounted, not any more
    await act(async () => {
      button(host.querySelector('tbody tr')!, 'Stop').click();
      await settle();
    });
    expect(host.querySelector('tbody tr')?.getAttribute('data-state')).toBe('terminating');
    const before = reads();
    await tick();
    expect(reads()).toBe(before + 1);
    root.unmount();
    expect(vi.getTimerCount()).toBe(0);
    await tick();
    expect(reads()).toBe(before + 1);
  });

  it('shows no start form to a member who cannot manage agents, and does not ask for the sizes', async () => {
    const calls = serve({ 'GET /api/agents': () => [agent('x', 'healthy', { state: 'running', hourly_cost: 0.2 }, 'use')] });
    const host = await mount(<ComputeScreen />, member);
    expect(host.querySelector('form')).toBeNull();
    expect(calls.some((c) => c.path.endsWith('compute-options'))).toBe(false);
    const row = host.querySelector('tbody tr')!;
    expect(row.textContent).toContain('0.2/h');
    expect(row.querySelector('button')).toBeNull();
  });
});

describe('worksheet pool choice', () => {
  it('offers the pool when compute options exist, and picks it when no agent is healthy', async () => {
    serve({ 'GET /api/agents': () => [agent('end', 'unavailable', { state: 'terminated' })], 'GET /api/admin/agents/compute-options': () => sizes });
    const picked: Array<string | null> = [];
    const host = await mount(<AgentPicker value={null} onChange={(v) => picked.push(v)} allowPool />);
    const labels = [...host.querySelectorAll('option')].map((o) => [o.value, o.textContent]);
    expect(labels).toContainEqual([POOL, 'Pool (elastic compute)']);
    // A stopped elastic agent is listed apart, by its name alone (its long label made the picker 700 px wide).
    expect(labels).toContainEqual(['end', 'agent-end']);
    expect(host.querySelector('optgroup')?.getAttribute('label')).toBe('Stopped elastic agents (start on use)');
    expect(host.querySelector('option[value=end]')?.getAttribute('title')).toBe('○ agent-end — unavailable · elastic terminated, starts on use (admin)');
    expect(picked).toEqual([POOL]);
    expect(agentIdOf(POOL)).toBeNull();
  });

  it('offers no pool with elastic compute off', async () => {
    serve({ 'GET /api/agents': () => [agent('a', 'healthy', null)], 'GET /api/admin/agents/compute-options': () => [] });
    const picked: Array<string | null> = [];
    const host = await mount(<AgentPicker value={null} onChange={(v) => picked.push(v)} allowPool />);
    expect([...host.querySelectorAll('option')].map((o) => o.value)).toEqual(['', 'a']);
    expect(picked).toEqual(['a']);
  });

  it('offers no pool where the caller does not allow one (a schedule needs a named agent)', async () => {
    const calls = serve({ 'GET /api/agents': () => [agent('e', 'unavailable', { state: 'terminated' })], 'GET /api/admin/agents/compute-options': () => sizes });
    const host = await mount(<AgentPicker value={null} onChange={() => {}} />);
    expect([...host.querySelectorAll('option')].map((o) => o.value)).toEqual(['', 'e']);
    expect(calls.some((c) => c.path.endsWith('compute-options'))).toBe(false);
  });

  it('offers the pool to a member who sees an elastic agent', async () => {
    const calls = serve({ 'GET /api/agents': () => [agent('a', 'healthy', { state: 'running' }, 'use')] });
    const host = await mount(<AgentPicker value="a" onChange={() => {}} allowPool />, member);
    expect([...host.querySelectorAll('option')].map((o) => o.value)).toContain(POOL);
    expect(calls.some((c) => c.path.endsWith('compute-options'))).toBe(false);
  });
});

describe('status pill', () => {
  const query = (status: string, agentId: string | null) => ({ id: 'q', status, agent_id: agentId, duration_ms: null }) as QueryOut;
  const run = (q: QueryOut) => ({ query: q, error: null, submitting: false, startedAtMs: 1, elapsedMs: 1500, runNumber: 1 });

  it('reads "waiting for compute" while a queued query has no agent, and its status once it has one', async () => {
    serve({});
    const host = await mount(<StatusPill run={run(query('queued', null))} />);
    const pill = host.querySelector('.pill')!;
    expect(pill.textContent).toBe('waiting for compute · 1.50 s');
    expect(pill.getAttribute('data-status')).toBe('queued');
    await root.render(<StatusPill run={run(query('queued', 'a'))} />);
    expect(host.querySelector('.pill')!.textContent).toBe('queued · 1.50 s');
    await root.render(<StatusPill run={run(query('running', 'a'))} />);
    expect(host.querySelector('.pill')!.textContent).toBe('running · 1.50 s');
  });
});
