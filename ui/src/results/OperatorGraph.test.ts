import { describe, expect, it } from 'vitest';
import type { ProfileOperator } from '../api/types.ts';
import { heaviest, layoutOperators } from './OperatorGraph.tsx';

const op = (name: string, timing_ms: number, children: ProfileOperator[] = []): ProfileOperator => ({ name, timing_ms, cardinality: 1, children });

describe('operator graph layout', () => {
  const scanA = op('SEQ_SCAN a', 5);
  const scanB = op('SEQ_SCAN b', 1);
  const join = op('HASH_JOIN', 3, [scanA, scanB]);
  const root = op('HASH_GROUP_BY', 0.5, [join]);

  it('places leaves side by side and each parent centred above its children', () => {
    const { nodes, width, height } = layoutOperators(root);
    const at = (o: ProfileOperator) => nodes.find((n) => n.op === o)!;
    expect(at(scanA).y).toBe(at(scanB).y);
    expect(at(scanB).x).toBeGreaterThan(at(scanA).x);
    expect(at(join).x).toBe((at(scanA).x + at(scanB).x) / 2);
    expect(at(root).x).toBe(at(join).x);
    expect(at(root).y).toBeLessThan(at(join).y);
    expect(at(join).y).toBeLessThan(at(scanA).y);
    expect(at(join).parent).toBe(at(root));
    expect(width).toBeGreaterThan(at(scanB).x);
    expect(height).toBeGreaterThan(at(scanA).y);
  });

  it('marks at most three operators, the slowest, and none that took no time', () => {
    const idle = op('PROJECTION', 0);
    expect([...heaviest([root, join, scanA, scanB, idle])].map((o) => o.name)).toEqual(['SEQ_SCAN a', 'HASH_JOIN', 'SEQ_SCAN b']);
    expect(heaviest([idle]).size).toBe(0);
  });
});
