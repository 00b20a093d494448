// Which datasets a metric's rows can be joined to, and along which relationships. Traversal runs left to right only:
// the left side is the many side, so every step from a metric's dataset reaches at most one row and a measure is
// never summed twice (no fan-out). Paths are at most two relationships long; when more than one shortest path
// reaches a dataset the join is ambiguous and the caller must be told the alternatives.
import type { Model } from './definitions.ts';

const MAX_HOPS = 2;

export interface JoinStep {
  relationship: string;
  from: string;
  to: string;
}

export type Reach = { kind: 'ok'; path: JoinStep[] } | { kind: 'ambiguous'; paths: JoinStep[][] } | { kind: 'none' };

type Graph = Pick<Model, 'relationships'>;

/** Every path of at most MAX_HOPS steps from `base`, never revisiting a dataset, in a stable order. */
function pathsFrom(model: Graph, base: string): JoinStep[][] {
  const out: JoinStep[][] = [];
  const rels = [...model.relationships].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const extend = (path: JoinStep[], at: string, seen: Set<string>) => {
    if (path.length === MAX_HOPS) return;
    for (const r of rels) {
      if (r.left_dataset !== at || seen.has(r.right_dataset)) continue;
      const next = [...path, { relationship: r.name, from: at, to: r.right_dataset }];
      out.push(next);
      extend(next, r.right_dataset, new Set([...seen, r.right_dataset]));
    }
  };
  extend([], base, new Set([base]));
  return out;
}

export function reach(model: Graph, base: string, target: string): Reach {
  if (base === target) return { kind: 'ok', path: [] };
  const paths = pathsFrom(model, base).filter((p) => p[p.length - 1].to === target);
  if (paths.length === 0) return { kind: 'none' };
  const shortest = Math.min(...paths.map((p) => p.length));
  const best = paths.filter((p) => p.length === shortest);
  return best.length === 1 ? { kind: 'ok', path: best[0] } : { kind: 'ambiguous', paths: best };
}

/** A path as people read it: `orders > customer > customers`. */
export const describePath = (base: string, path: JoinStep[]) => [base, ...path.flatMap((s) => [s.relationship, s.to])].join(' > ');

/** The dimensions a metric of dataset `base` may be grouped or filtered by, each with its join path. */
export function legalDimensions(model: Pick<Model, 'relationships' | 'dimensions'>, base: string) {
  const out: Array<{ dimension: Model['dimensions'][number]; path: JoinStep[] }> = [];
  for (const d of model.dimensions) {
    const r = reach(model, base, d.dataset);
    if (r.kind === 'ok') out.push({ dimension: d, path: r.path });
  }
  return out;
}
