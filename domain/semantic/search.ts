// Search over the models a workspace may read: a term matches a model, dataset, dimension or metric by its name,
// display name, synonyms or description (case-insensitive). Exact name and synonym hits rank before partial ones.
// `ambiguous` names the dimensions and metrics whose name or synonym matches in more than one model (the caller
// must choose a model); `broken` lists the hits whose last validation found problems.
import type { Model, ValidationState } from './definitions.ts';

interface SearchItem {
  kind: 'model' | 'dataset' | 'dimension' | 'metric';
  model: string;
  name: string;
  display_name: string;
  description: string;
  validation_state: ValidationState;
  model_status: Model['status'];
}

export interface SearchResult {
  items: SearchItem[];
  ambiguous: Array<{ kind: string; name: string; models: string[] }>;
  broken: Array<{ kind: string; model: string; name: string }>;
  has_more: boolean;
}

interface Candidate {
  item: SearchItem;
  texts: { exact: string[]; partial: string[] };
}

function candidates(m: Model): Candidate[] {
  const out: Candidate[] = [];
  const base = { model: m.slug, model_status: m.status };
  out.push({
    item: { ...base, kind: 'model', name: m.slug, display_name: m.name, description: m.description, validation_state: m.validation.state },
    texts: { exact: [m.slug, m.name], partial: [m.slug, m.name, m.description] },
  });
  for (const d of m.datasets) {
    const table = `${d.catalog}.${d.schema_name}.${d.table_name}`;
    out.push({
      item: { ...base, kind: 'dataset', name: d.name, display_name: d.display_name ?? d.name, description: d.description ?? '', validation_state: d.validation_state },
      texts: { exact: [d.name, d.table_name], partial: [d.name, d.display_name ?? '', d.description ?? '', table] },
    });
  }
  for (const d of m.dimensions) {
    out.push({
      item: { ...base, kind: 'dimension', name: d.name, display_name: d.display_name, description: d.description, validation_state: d.validation_state },
      texts: { exact: [d.name, d.display_name, ...d.synonyms], partial: [d.name, d.display_name, d.description, ...d.synonyms] },
    });
  }
  for (const x of m.metrics) {
    out.push({
      item: { ...base, kind: 'metric', name: x.name, display_name: x.display_name, description: x.description, validation_state: x.validation_state },
      texts: { exact: [x.name, x.display_name, ...x.synonyms], partial: [x.name, x.display_name, x.description, ...x.synonyms] },
    });
  }
  return out;
}

const fold = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, ' ').trim();

export function searchModels(models: readonly Model[], q: string, limit: number): SearchResult {
  const term = fold(q);
  const scored: Array<{ item: SearchItem; score: number }> = [];
  for (const m of models) {
    for (const c of candidates(m)) {
      const exact = c.texts.exact.some((t) => fold(t) === term);
      const partial = exact || c.texts.partial.some((t) => fold(t).includes(term));
      if (partial) scored.push({ item: c.item, score: exact ? 0 : 1 });
    }
  }
  const kindOrder = { metric: 0, dimension: 1, dataset: 2, model: 3 } as const;
  scored.sort(
    (a, b) =>
      a.score - b.score ||
      kindOrder[a.item.kind] - kindOrder[b.item.kind] ||
      (a.item.model < b.item.model ? -1 : a.item.model > b.item.model ? 1 : 0) ||
      (a.item.name < b.item.name ? -1 : a.item.name > b.item.name ? 1 : 0),
  );
  const byName = new Map<string, Set<string>>();
  for (const { item } of scored) {
    if (item.kind !== 'metric' && item.kind !== 'dimension') continue;
    const key = `${item.kind}\u0000${item.name}`;
    byName.set(key, (byName.get(key) ?? new Set()).add(item.model));
  }
  const ambiguous = [...byName.entries()]
    .filter(([, ms]) => ms.size > 1)
    .map(([key, ms]) => {
      const [kind, name] = key.split('\u0000');
      return { kind, name, models: [...ms].sort() };
    });
  const broken = scored.filter((s) => s.item.validation_state === 'broken').map((s) => ({ kind: s.item.kind, model: s.item.model, name: s.item.name }));
  return { items: scored.slice(0, limit).map((s) => s.item), ambiguous, broken, has_more: scored.length > limit };
}
