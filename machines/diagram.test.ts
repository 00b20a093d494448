import { describe, expect, test } from 'vitest';
import { machineKinds, machineKindNames } from './index.ts';
import { machineDefinition } from './definition.ts';
import { escapeXml, toMermaid, toSvg } from './diagram.ts';

/** Well-formedness without a parser: every tag opened is closed in order, attributes are quoted, no raw `&`. */
function assertWellFormedXml(xml: string): void {
  const body = xml.replace(/^<\?xml[^>]*\?>\s*/, '');
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(body); m !== null; m = tag.exec(body)) {
    const text = body.slice(last, m.index);
    expect(text).not.toMatch(/[<>]/);
    expect(text).not.toMatch(/&(?!(amp|lt|gt|quot|apos);)/);
    last = m.index + m[0].length;
    if (m[4] === '/') continue;
    if (m[1] === '/') expect(stack.pop()).toBe(m[2]);
    else stack.push(m[2]);
  }
  expect(body.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
}

describe('machine definitions and diagrams', () => {
  test('definitions are read from the machines themselves', () => {
    const def = machineDefinition(machineKinds.query.machine);
    expect(def.id).toBe('query');
    expect(def.initial).toBe('start');
    expect(def.states.map((s) => s.name)).toEqual(['start', 'awaitingCompute', 'queued', 'running', 'cancelling', 'done', 'failed', 'cancelled']);
    expect(def.states.find((s) => s.name === 'start')).toMatchObject({ transient: true });
    expect(def.states.find((s) => s.name === 'done')).toMatchObject({ type: 'final' });
    expect(def.transitions).toContainEqual(
      expect.objectContaining({ from: 'running', event: 'deadline', to: 'failed', guard: 'deadlinePassed', actions: ['assignFailure', 'sendCancelQuery', 'agentWorkChanged'] }),
    );
    expect(def.transitions).toContainEqual(expect.objectContaining({ from: 'start', event: 'always', to: 'queued', guard: 'hasAgent', eventless: true }));
    expect(def.events).toContain('cancel');
    expect(def.events).not.toContain('always');

    const session = machineDefinition(machineKinds.sqlSession.machine);
    expect(session.transitions).toContainEqual(
      expect.objectContaining({ from: 'pending', event: 'statementSubmitted', to: 'pending', targetless: true, actions: ['rejectStatement'] }),
    );
    const migration = machineDefinition(machineKinds.storageMigration.machine);
    expect(migration.transitions).toContainEqual(expect.objectContaining({ from: 'copying', event: 'deadline', to: 'copying', reenter: true, guard: 'retryDue' }));
  });

  test.each(machineKindNames)('%s: standalone SVG with every state, final states double-bordered, current highlighted', (kind) => {
    const def = machineDefinition(machineKinds[kind].machine);
    const current = def.states.find((s) => s.type !== 'final' && !s.transient)!.name;
    const svg = toSvg(def, current);
    assertWellFormedXml(svg);
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
    for (const s of def.states) expect(svg).toContain(`data-state="${s.name}"`);
    expect(svg.match(/class="state current"/g)).toHaveLength(1);
    expect(svg).toContain(`class="state current" data-state="${current}"`);
    const finals = def.states.filter((s) => s.type === 'final').length;
    expect(svg.match(/class="inner"/g)).toHaveLength(finals);
    expect(svg).toContain('marker-end="url(#arrow)"');

    const mermaid = toMermaid(def, current);
    expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(mermaid).toContain(`[*] --> ${def.initial}`);
    expect(mermaid).toContain(`class ${current} current`);
  });

  test('text is escaped', () => {
    expect(escapeXml(`a<b & "c" 'd'>`)).toBe('a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;');
    const def = machineDefinition(machineKinds.query.machine);
    const svg = toSvg({ ...def, description: 'rows < 10 & "quoted"' });
    assertWellFormedXml(svg);
    expect(svg).toContain('rows &lt; 10 &amp; &quot;quoted&quot;');
  });
});
