// State-chart pictures of a machine definition for operators: Mermaid source, and a standalone SVG drawn here
// without a browser. SVG layout: states in columns ranked by breadth-first distance from the initial state,
// forward edges left to right, backward and same-column edges arched above, self-loops over the box.
import type { MachineDefinition, StateDefinition, TransitionDefinition } from './definition.ts';

// ---------- Mermaid ----------

function mermaidId(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Mermaid label text: no characters that end or break a stateDiagram label. */
function mermaidLabel(text: string): string {
  return text.replace(/[;#:\n\r]/g, ' ').replace(/\s+/g, ' ').trim();
}

function transitionLabel(t: TransitionDefinition): string {
  return t.guard ? `${t.event} [${t.guard}]` : t.event;
}

/** Mermaid `stateDiagram-v2` source; the current state, when given, gets the `current` class. */
export function toMermaid(def: MachineDefinition, currentState?: string): string {
  const lines = ['stateDiagram-v2'];
  lines.push(`  [*] --> ${mermaidId(def.initial)}`);
  const seen = new Set<string>();
  for (const t of def.transitions) {
    const froms = t.from === '*' ? def.states.filter((s) => s.type !== 'final').map((s) => s.name) : [t.from];
    for (const from of froms) {
      const to = t.from === '*' && t.targetless ? from : t.to;
      const line = `  ${mermaidId(from)} --> ${mermaidId(to)} : ${mermaidLabel(transitionLabel(t))}`;
      if (seen.has(line)) continue;
      seen.add(line);
      lines.push(line);
    }
  }
  for (const state of def.states) {
    if (state.type === 'final') lines.push(`  ${mermaidId(state.name)} --> [*]`);
  }
  lines.push('  classDef current fill:#fde68a,stroke:#b45309,stroke-width:3px');
  lines.push('  classDef final fill:#e5e7eb,stroke:#374151');
  const finals = def.states.filter((s) => s.type === 'final' && s.name !== currentState).map((s) => mermaidId(s.name));
  if (finals.length > 0) lines.push(`  class ${finals.join(',')} final`);
  if (currentState !== undefined && def.states.some((s) => s.name === currentState)) {
    lines.push(`  class ${mermaidId(currentState)} current`);
  }
  return lines.join('\n') + '\n';
}

// ---------- SVG ----------

const FONT = 13;
const LABEL_FONT = 11;
const CHAR_W = 7.4;
const LABEL_CHAR_W = 6.2;
const BOX_H = 38;
const ROW_GAP = 46;
const LINE_H = 13;
const MARGIN = 40;
const LABEL_WRAP = 34;

/** Text safe inside an SVG element or attribute. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

interface Box {
  state: StateDefinition;
  rank: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

interface Edge {
  from: string;
  to: string;
  labels: string[];
}

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

type Point = { x: number; y: number };
type Cubic = [Point, Point, Point, Point];

/** One edge per (from, to) pair, carrying every distinct event label; root (`*`) transitions fan out. */
function edgesOf(def: MachineDefinition): Edge[] {
  const byPair = new Map<string, Edge>();
  for (const t of def.transitions) {
    const froms = t.from === '*' ? def.states.filter((s) => s.type !== 'final').map((s) => s.name) : [t.from];
    for (const from of froms) {
      for (const target of t.targetless ? [from] : t.to.split(',')) {
        const key = `${from}\u0000${target}`;
        const edge = byPair.get(key) ?? { from, to: target, labels: [] };
        const label = transitionLabel(t);
        if (!edge.labels.includes(label)) edge.labels.push(label);
        byPair.set(key, edge);
      }
    }
  }
  return [...byPair.values()];
}

/**
 * Columns: the longest path from the initial state once the edges that close cycles (found by a depth-first walk)
 * are set aside, so a state always sits right of every state that leads to it. Unreachable states go last.
 */
function rank(def: MachineDefinition, edges: Edge[]): Map<string, number> {
  const names = def.states.map((s) => s.name);
  const next = new Map<string, string[]>(names.map((n) => [n, []]));
  for (const e of edges) if (e.from !== e.to && next.has(e.from) && next.has(e.to)) next.get(e.from)!.push(e.to);

  const back = new Set<string>();
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (n: string): void => {
    visiting.add(n);
    for (const m of next.get(n) ?? []) {
      if (visiting.has(m)) back.add(`${n}\u0000${m}`);
      else if (!done.has(m)) visit(m);
    }
    visiting.delete(n);
    done.add(n);
  };
  if (next.has(def.initial)) visit(def.initial);

  const ranks = new Map<string, number>();
  const indegree = new Map<string, number>();
  const forward = (n: string) => (next.get(n) ?? []).filter((m) => done.has(m) && !back.has(`${n}\u0000${m}`));
  for (const n of done) for (const m of forward(n)) indegree.set(m, (indegree.get(m) ?? 0) + 1);
  const queue = [...done].filter((n) => (indegree.get(n) ?? 0) === 0);
  for (const n of queue) ranks.set(n, 0);
  while (queue.length > 0) {
    const n = queue.shift()!;
    for (const m of forward(n)) {
      ranks.set(m, Math.max(ranks.get(m) ?? 0, ranks.get(n)! + 1));
      indegree.set(m, indegree.get(m)! - 1);
      if (indegree.get(m) === 0) queue.push(m);
    }
  }
  const last = Math.max(-1, ...ranks.values()) + 1;
  for (const n of names) if (!ranks.has(n)) ranks.set(n, last);
  return ranks;
}

/** Labels joined into lines of about LABEL_WRAP characters. */
function wrapLabels(labels: string[]): string[] {
  const lines: string[] = [];
  let line = '';
  for (const l of labels) {
    if (line === '') line = l;
    else if (line.length + 2 + l.length <= LABEL_WRAP) line += `, ${l}`;
    else {
      lines.push(`${line},`);
      line = l;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

function labelSize(lines: string[]): { w: number; h: number } {
  return { w: Math.max(...lines.map((l) => l.length)) * LABEL_CHAR_W + 8, h: lines.length * LINE_H + 4 };
}

function layout(
  def: MachineDefinition,
  ranks: Map<string, number>,
  edges: Edge[],
): { boxes: Map<string, Box>; width: number; height: number; top: number } {
  const columns: StateDefinition[][] = [];
  for (const s of def.states) (columns[ranks.get(s.name)!] ??= []).push(s);
  // Order each column by the mean position of its predecessors, so edges cross less.
  const position = new Map<string, number>();
  columns.forEach((column, r) => {
    if (!column) return;
    if (r > 0) {
      const declared = new Map(def.states.map((s, i) => [s.name, i]));
      const weight = (s: StateDefinition): number => {
        const preds = edges.filter((e) => e.to === s.name && e.from !== s.name && (ranks.get(e.from) ?? 0) < r);
        const known = preds.map((e) => position.get(e.from)).filter((p): p is number => p !== undefined);
        return known.length === 0 ? Number.POSITIVE_INFINITY : known.reduce((a, b) => a + b, 0) / known.length;
      };
      column.sort((a, b) => weight(a) - weight(b) || declared.get(a.name)! - declared.get(b.name)!);
    }
    column.forEach((s, i) => position.set(s.name, i));
  });

  const gapAfter: number[] = columns.map((_, r) => {
    let widest = 0;
    for (const e of edges) {
      if (ranks.get(e.from) !== r || ranks.get(e.to)! <= r) continue;
      widest = Math.max(widest, labelSize(wrapLabels(e.labels)).w);
    }
    return Math.max(110, widest + 50);
  });
  const arches = edges.filter((e) => e.from !== e.to && ranks.get(e.to)! < ranks.get(e.from)!).length;
  const loopLabel = Math.max(0, ...edges.filter((e) => e.from === e.to).map((e) => labelSize(wrapLabels(e.labels)).h + 30));
  const top = MARGIN + 30 + Math.max(Math.min(arches, 8) * 16 + 30, loopLabel);
  const boxes = new Map<string, Box>();
  let x = MARGIN + 40;
  let height = 0;
  columns.forEach((column, r) => {
    const list = column ?? [];
    const w = Math.max(96, ...list.map((s) => s.name.length * CHAR_W + 28));
    let y = top;
    for (const s of list) {
      const selfLoop = edges.find((e) => e.from === s.name && e.to === s.name);
      if (selfLoop && y > top) y += wrapLabels(selfLoop.labels).length * LINE_H + 20;
      boxes.set(s.name, { state: s, rank: r, x, y, w, h: BOX_H });
      y += BOX_H + ROW_GAP;
    }
    height = Math.max(height, y);
    x += w + (gapAfter[r] ?? 110);
  });
  return { boxes, width: x + MARGIN, height: height + MARGIN, top };
}

function at(c: Cubic, t: number): Point {
  const u = 1 - t;
  const k = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t];
  return { x: k[0] * c[0].x + k[1] * c[1].x + k[2] * c[2].x + k[3] * c[3].x, y: k[0] * c[0].y + k[1] * c[1].y + k[2] * c[2].y + k[3] * c[3].y };
}

function overlap(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/** The point along the edge where its label collides least with boxes and labels already placed. */
function placeLabel(curve: Cubic, size: { w: number; h: number }, taken: Rect[], ts: number[]): Rect {
  let best: Rect | null = null;
  let bestCost = Number.POSITIVE_INFINITY;
  for (const t of ts) {
    for (const dy of [0, -size.h / 2 - 4, size.h / 2 + 4]) {
      const p = at(curve, t);
      const rect = { x: p.x - size.w / 2, y: p.y - size.h / 2 + dy, w: size.w, h: size.h };
      const cost = taken.reduce((sum, r) => sum + overlap(rect, r), 0) + Math.abs(dy) * 0.5 + Math.abs(t - 0.5) * 10;
      if (cost < bestCost) {
        best = rect;
        bestCost = cost;
      }
    }
  }
  return best!;
}

function fmt(p: Point): string {
  return `${p.x.toFixed(1)} ${p.y.toFixed(1)}`;
}

/** A standalone SVG state chart; final states are double-bordered, the current state highlighted. */
export function toSvg(def: MachineDefinition, currentState?: string): string {
  const edges = edgesOf(def);
  const ranks = rank(def, edges);
  const { boxes, width, height, top } = layout(def, ranks, edges);

  // Ports: edges sharing a side of a box are spread along it, ordered by the far end's height to avoid crossings.
  const outPorts = new Map<string, Edge[]>();
  const inPorts = new Map<string, Edge[]>();
  const centerY = (name: string) => boxes.get(name)!.y + BOX_H / 2;
  for (const e of edges) {
    if (e.from === e.to || ranks.get(e.to)! <= ranks.get(e.from)!) continue;
    (outPorts.get(e.from) ?? outPorts.set(e.from, []).get(e.from)!).push(e);
    (inPorts.get(e.to) ?? inPorts.set(e.to, []).get(e.to)!).push(e);
  }
  for (const list of outPorts.values()) list.sort((a, b) => centerY(a.to) - centerY(b.to));
  for (const list of inPorts.values()) list.sort((a, b) => centerY(a.from) - centerY(b.from));
  const portY = (list: Edge[] | undefined, e: Edge, box: Box): number => {
    const n = list?.length ?? 1;
    const i = Math.max(0, list?.indexOf(e) ?? 0);
    return box.y + 6 + ((box.h - 12) * (i + 1)) / (n + 1);
  };

  const taken: Rect[] = [...boxes.values()].map((b) => ({ x: b.x - 4, y: b.y - 4, w: b.w + 8, h: b.h + 8 }));
  const edgeParts: string[] = [];
  const labelParts: string[] = [];
  let arch = 0;
  let sideways = 0;
  for (const e of edges) {
    const a = boxes.get(e.from);
    const b = boxes.get(e.to);
    if (!a || !b) continue;
    const lines = wrapLabels(e.labels);
    const size = labelSize(lines);
    let curve: Cubic;
    let ts = [0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78];
    if (e.from === e.to) {
      const x1 = a.x + a.w - 34;
      const x2 = a.x + a.w - 12;
      curve = [{ x: x1, y: a.y }, { x: x1 - 8, y: a.y - 26 }, { x: x2 + 16, y: a.y - 26 }, { x: x2, y: a.y }];
      ts = [0.5];
    } else if (b.rank > a.rank) {
      const p0 = { x: a.x + a.w, y: portY(outPorts.get(e.from), e, a) };
      const p3 = { x: b.x, y: portY(inPorts.get(e.to), e, b) };
      const dx = Math.max(40, (p3.x - p0.x) / 2);
      curve = [p0, { x: p0.x + dx, y: p0.y }, { x: p3.x - dx, y: p3.y }, p3];
      // Long edges keep their label near the source, clear of the columns they pass.
      if (b.rank - a.rank > 1) ts = [0.2, 0.15, 0.3, 0.1, 0.4];
    } else if (b.rank < a.rank) {
      // Backward: an arch over the chart, one band per edge.
      const band = top - 30 - (arch % 8) * 16;
      arch += 1;
      const p0 = { x: a.x + a.w / 2 + 10, y: a.y };
      const p3 = { x: b.x + b.w / 2 - 10, y: b.y };
      curve = [p0, { x: p0.x, y: band }, { x: p3.x, y: band }, p3];
    } else {
      // Same column: a bulge out to the right of the column.
      const bulge = 46 + (sideways % 4) * 18;
      sideways += 1;
      const p0 = { x: a.x + a.w, y: a.y + a.h / 2 + (b.y > a.y ? 6 : -6) };
      const p3 = { x: b.x + b.w, y: b.y + b.h / 2 + (b.y > a.y ? -6 : 6) };
      curve = [p0, { x: p0.x + bulge, y: p0.y }, { x: p3.x + bulge, y: p3.y }, p3];
    }
    const rect =
      e.from === e.to
        ? { x: a.x + a.w / 2 - size.w / 2 + 10, y: a.y - 26 - size.h - 2, w: size.w, h: size.h }
        : placeLabel(curve, size, taken, ts);
    taken.push(rect);
    const cx = rect.x + rect.w / 2;
    const text = lines
      .map((l, i) => `<tspan x="${cx.toFixed(1)}" y="${(rect.y + LINE_H * (i + 1) - 1).toFixed(1)}">${escapeXml(l)}</tspan>`)
      .join('');
    const tip = escapeXml(`${e.from} → ${e.to}: ${e.labels.join('; ')}`);
    edgeParts.push(
      `<path class="edge" d="M ${fmt(curve[0])} C ${fmt(curve[1])}, ${fmt(curve[2])}, ${fmt(curve[3])}" marker-end="url(#arrow)"><title>${tip}</title></path>`,
    );
    labelParts.push(
      `<g class="edge-label"><title>${tip}</title><rect x="${rect.x.toFixed(1)}" y="${rect.y.toFixed(1)}" width="${rect.w.toFixed(1)}" height="${rect.h.toFixed(1)}" rx="3"/>` +
        `<text text-anchor="middle">${text}</text></g>`,
    );
  }

  const nodes: string[] = [];
  for (const box of boxes.values()) {
    const s = box.state;
    const classes = ['state'];
    if (s.type === 'final') classes.push('final');
    if (s.transient) classes.push('transient');
    if (s.name === currentState) classes.push('current');
    const tip = s.description ? `${s.name}: ${s.description}` : s.name;
    let shape = `<rect x="${box.x}" y="${box.y}" width="${box.w.toFixed(1)}" height="${box.h}" rx="10"/>`;
    if (s.type === 'final') {
      shape += `<rect class="inner" x="${box.x + 4}" y="${box.y + 4}" width="${(box.w - 8).toFixed(1)}" height="${box.h - 8}" rx="7"/>`;
    }
    nodes.push(
      `<g class="${classes.join(' ')}" data-state="${escapeXml(s.name)}"><title>${escapeXml(tip)}</title>${shape}` +
        `<text x="${(box.x + box.w / 2).toFixed(1)}" y="${box.y + box.h / 2 + FONT / 2 - 2}" text-anchor="middle">${escapeXml(s.name)}</text></g>`,
    );
  }

  const initial = boxes.get(def.initial);
  const start = initial
    ? `<g class="initial"><circle cx="${initial.x - 26}" cy="${initial.y + initial.h / 2}" r="6"/>` +
      `<path d="M ${initial.x - 20} ${initial.y + initial.h / 2} L ${initial.x} ${initial.y + initial.h / 2}" marker-end="url(#arrow)"/></g>`
    : '';

  const style = [
    `text { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; font-size: ${FONT}px; fill: #111827; }`,
    '.title { font-size: 15px; font-weight: 600; }',
    '.state rect { fill: #eef2ff; stroke: #4338ca; stroke-width: 1.5; }',
    '.state.final rect { fill: #f3f4f6; stroke: #374151; }',
    '.state.final rect.inner { fill: none; }',
    '.state.transient rect { stroke-dasharray: 5 3; fill: #ffffff; }',
    '.state.current rect { fill: #fde68a; stroke: #b45309; stroke-width: 3; }',
    '.state.current rect.inner { fill: none; stroke-width: 1.5; }',
    '.edge, .initial path { fill: none; stroke: #6b7280; stroke-width: 1.2; }',
    '.initial circle { fill: #111827; }',
    `.edge-label text { font-size: ${LABEL_FONT}px; fill: #374151; }`,
    '.edge-label rect { fill: #ffffff; fill-opacity: 0.9; stroke: #e5e7eb; stroke-width: 0.5; }',
    '#arrow path { fill: #6b7280; }',
  ].join('\n');

  const title = def.description ? `${def.id}: ${def.description}` : def.id;
  const w = Math.ceil(width);
  const h = Math.ceil(height);
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeXml(def.id)} state chart">\n` +
    `<title>${escapeXml(title)}</title>\n` +
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">` +
    `<path d="M 0 0 L 10 5 L 0 10 z"/></marker><style>${style}</style></defs>\n` +
    `<rect width="100%" height="100%" fill="#ffffff"/>\n` +
    `<text class="title" x="${MARGIN}" y="${MARGIN - 10}">${escapeXml(title)}</text>\n` +
    `${start}\n${edgeParts.join('\n')}\n${nodes.join('\n')}\n${labelParts.join('\n')}\n</svg>\n`
  );
}
