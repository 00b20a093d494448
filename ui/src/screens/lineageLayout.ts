// Where the lineage graph's boxes go: one column per hop from the table the page is about (upstream to the left,
// downstream to the right), boxes in a column ordered by key so a graph draws the same every time, and each edge a
// curve from its source's right side to its target's left side, with a handle at its middle to click.

export const BOX = { w: 200, h: 46, gapX: 72, gapY: 16, pad: 12 };

interface PlacedNode {
  key: string;
  /** hops from the table the graph is around: negative upstream, positive downstream */
  depth: number;
  x: number;
  y: number;
}

interface PlacedEdge {
  source: string;
  target: string;
  d: string;
  /** the curve's midpoint, where the edge's handle sits */
  mx: number;
  my: number;
}

export interface GraphLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

/** Depth by a walk from `start` over edges either way (an edge is one hop right, walked backwards one hop left). */
export function depths(keys: readonly string[], edges: ReadonlyArray<{ source: string; target: string }>, start: string): Map<string, number> {
  const depth = new Map<string, number>();
  const root = keys.includes(start) ? start : keys[0];
  if (root === undefined) return depth;
  depth.set(root, 0);
  const queue = [root];
  while (queue.length) {
    const k = queue.shift()!;
    const d = depth.get(k)!;
    for (const e of edges) {
      if (e.source === k && !depth.has(e.target)) {
        depth.set(e.target, d + 1);
        queue.push(e.target);
      }
      if (e.target === k && !depth.has(e.source)) {
        depth.set(e.source, d - 1);
        queue.push(e.source);
      }
    }
  }
  // Nothing should be unreached (the answer is one walk), but a stray node still gets a place: past the right end.
  const right = Math.max(0, ...depth.values()) + 1;
  for (const k of keys) if (!depth.has(k)) depth.set(k, right);
  return depth;
}

export function layoutLineage(nodes: ReadonlyArray<{ key: string }>, edges: ReadonlyArray<{ source: string; target: string }>, start: string): GraphLayout {
  const keys = nodes.map((n) => n.key);
  const depth = depths(keys, edges, start);
  const min = Math.min(0, ...depth.values());
  const columns = new Map<number, string[]>();
  for (const k of [...keys].sort()) columns.set(depth.get(k)!, [...(columns.get(depth.get(k)!) ?? []), k]);
  const placed = new Map<string, PlacedNode>();
  for (const [d, column] of columns) {
    column.forEach((key, row) => placed.set(key, { key, depth: d, x: BOX.pad + (d - min) * (BOX.w + BOX.gapX), y: BOX.pad + row * (BOX.h + BOX.gapY) }));
  }
  const out: PlacedEdge[] = [];
  for (const e of edges) {
    const s = placed.get(e.source);
    const t = placed.get(e.target);
    if (!s || !t) continue;
    const [sx, sy, tx, ty] = [s.x + BOX.w, s.y + BOX.h / 2, t.x, t.y + BOX.h / 2];
    // Forward edges bow by half the gap; one that runs back (a cycle) loops out far enough to stay visible.
    const bend = tx > sx ? (tx - sx) / 2 : BOX.gapX;
    // The cubic's point at t = 1/2: (P0 + 3 P1 + 3 P2 + P3) / 8.
    const mx = (sx + 3 * (sx + bend) + 3 * (tx - bend) + tx) / 8;
    const my = (sy + 3 * sy + 3 * ty + ty) / 8;
    out.push({ source: e.source, target: e.target, d: `M${sx},${sy} C${sx + bend},${sy} ${tx - bend},${ty} ${tx},${ty}`, mx, my });
  }
  const all = [...placed.values()];
  const width = all.length ? Math.max(...all.map((n) => n.x)) + BOX.w + BOX.pad : 0;
  const height = all.length ? Math.max(...all.map((n) => n.y)) + BOX.h + BOX.pad : 0;
  return { nodes: all, edges: out, width, height };
}
