// Semantic models: browse a workspace's models, look inside one (datasets, relationships, dimensions, metrics and
// what its last validation found), validate and publish it, and see the SQL a metric compiles to for chosen
// dimensions, with "Open in worksheet" to run it. A native YAML model is imported here (pasted or from a file).
import { useState, type FormEvent } from 'react';
import { call, enc } from '../api/client.ts';
import type { ImportSemanticModelsResponse } from '../api/generated.ts';
import type { SemanticModel } from '../api/types.ts';
import { navigate } from '../app/router.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatTime } from '../components/format.ts';
import { openInWorksheet } from '../worksheet/worksheetStore.ts';
import { EmptyState } from '../components/EmptyState.tsx';

const GRAINS = ['day', 'week', 'month', 'quarter', 'year'] as const;

export function ModelsScreen(props: { ws: string; model?: string }) {
  const base = `/w/${enc(props.ws)}/models`;
  return (
    <section className="models">
      <h1>Models</h1>
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link href={base}>Models</Link>
        {props.model ? <> / {props.model}</> : null}
      </nav>
      {props.model ? <ModelDetail ws={props.ws} slug={props.model} /> : <ModelList ws={props.ws} base={base} />}
    </section>
  );
}

function StateBadge(props: { state: string }) {
  return <span className={`badge state-${props.state}`}>{props.state}</span>;
}

function ModelList(props: { ws: string; base: string }) {
  const list = useAsync((signal) => call('GET /api/workspaces/{workspace}/semantic/models', { path: { workspace: props.ws }, signal }), [props.ws]);
  if (list.error) return <ErrorNotice error={list.error} what="Models" />;
  if (!list.data) return <Loading />;
  const empty = !list.data.length;
  // The import form keeps its place (and its report) when the first import fills the list.
  return (
    <>
    {empty ? <EmptyState>No semantic model yet. Create one in YAML below (start from the example), or import a dbt manifest.</EmptyState> : null}
    <ImportModel ws={props.ws} open={empty} onImported={list.reload} />
    {empty ? null : <table className="data" aria-label="Models">
      <thead>
        <tr>
          <th>Model</th>
          <th>Status</th>
          <th>Validation</th>
          <th>Metrics</th>
          <th>Source</th>
        </tr>
      </thead>
      <tbody>
        {list.data.map((m) => (
          <tr key={m.slug}>
            <td>
              <Link href={`${props.base}/${enc(m.slug)}`}>{m.name}</Link> <span className="hint">{m.slug}</span>
            </td>
            <td>{m.status}</td>
            <td>
              <StateBadge state={m.validation.state} />
            </td>
            <td>{m.metrics.length}</td>
            <td>{m.imported ? `imported (${m.provider === 'transform' ? 'dbt' : m.provider})` : 'written in Eider'}</td>
          </tr>
        ))}
      </tbody>
    </table>}
    </>
  );
}

const YAML_EXAMPLE = `version: 1
models:
  - slug: shop
    name: Shop
    datasets:
      - {name: orders, catalog: warehouse, schema: shop, table: orders, primary_key: [id]}
    dimensions:
      - {name: order_date, dataset: orders, kind: time, default_time: true}
      - {name: region, dataset: orders}
    metrics:
      - {name: revenue, dataset: orders, agg: sum, expr: amount}
      - {name: order_count, dataset: orders, agg: count}`;

/** What the form takes: a native YAML document (version 1, see docs/semantic-layer.md) or a dbt manifest.json. */
const FORMATS = {
  native: { label: 'Eider YAML (version 1)', contentType: 'application/yaml', accept: '.yaml,.yml,text/yaml,application/yaml' },
  transform: { label: 'dbt manifest.json', contentType: 'application/json', accept: '.json,application/json' },
} as const;

/**
 * Creates models from a native YAML document (typed here, from the example, pasted or read from a file) or imports a
 * dbt manifest. reconcile=none: a document given here adds and updates models, it does not retire the ones it leaves out.
 */
function ImportModel(props: { ws: string; open?: boolean; onImported: () => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<ImportSemanticModelsResponse | null>(null);
  const [format, setFormat] = useState<keyof typeof FORMATS>('native');
  // Open at first when there is no model yet, and left as the reader sets it after (the first import fills the list).
  const [openAtStart] = useState(Boolean(props.open));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const report = await call('POST /api/workspaces/{workspace}/semantic/imports/{provider}', {
        path: { workspace: props.ws, provider: format },
        body: text,
        contentType: FORMATS[format].contentType,
        query: { reconcile: 'none' },
      });
      setDone(report);
      props.onImported();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const readFile = (file: File | undefined) => void file?.text().then(setText, setError);
  const words = (label: string, names: string[]) => (names.length ? `${label} ${names.join(', ')}` : null);
  return (
    <>
    <details className="card import-model" open={openAtStart}>
      <summary>Create or import a model</summary>
      <form className="stack" aria-label="Create or import a model" onSubmit={submit}>
        <div className="row wrap">
          <label className="inline">
            Format{' '}
            <select aria-label="Format" value={format} onChange={(e) => setFormat(e.target.value as keyof typeof FORMATS)}>
              {Object.entries(FORMATS).map(([k, f]) => (
                <option key={k} value={k}>
                  {f.label}
                </option>
              ))}
            </select>
          </label>
          {format === 'native' ? (
            <button type="button" className="secondary" onClick={() => setText(YAML_EXAMPLE)}>
              Start from the example
            </button>
          ) : null}
        </div>
        <label htmlFor="model-yaml">{format === 'native' ? 'Model YAML (native format, version 1)' : 'dbt manifest.json'}</label>
        <textarea id="model-yaml" className="mono" rows={12} spellCheck={false} placeholder={format === 'native' ? YAML_EXAMPLE : '{"metadata": {"dbt_schema_version": …}, "nodes": {…}, "semantic_models": {…}, "metrics": {…}}'} value={text} onChange={(e) => setText(e.target.value)} />
        <div className="row wrap">
          <label>
            Or read a file <input type="file" accept={FORMATS[format].accept} onChange={(e) => readFile(e.target.files?.[0])} />
          </label>
          <span className="grow" />
          <button type="submit" disabled={busy || !text.trim()}>
            {busy ? 'Importing…' : 'Import'}
          </button>
        </div>
      </form>
    </details>
    {error ? <ErrorNotice error={error} what="Import" /> : null}
    {done ? (
      <p role="status">
        {[words('Created', done.created), words('updated', done.updated), words('retired', done.retired)].filter(Boolean).join('; ') || 'Nothing changed'}.
        {done.skipped.length ? ` Skipped: ${done.skipped.map((s) => `${s.item} (${s.reason})`).join('; ')}.` : ''}
      </p>
    ) : null}
    </>
  );
}

function ModelDetail(props: { ws: string; slug: string }) {
  const path = { workspace: props.ws, model: props.slug };
  const model = useAsync((signal) => call('GET /api/workspaces/{workspace}/semantic/models/{model}', { path, signal }), [props.ws, props.slug]);
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const act = async (verb: 'validate' | 'publish') => {
    setBusy(true);
    setActionError(undefined);
    try {
      await call(`POST /api/workspaces/{workspace}/semantic/models/{model}/${verb}`, { path });
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(false);
      model.reload();
    }
  };
  if (model.error) return <ErrorNotice error={model.error} what="Model" />;
  if (!model.data) return <Loading />;
  const m = model.data;
  return (
    <>
      <p>
        {m.name} <span className="hint">{m.description}</span>
      </p>
      <p>
        Status <strong>{m.status}</strong> · validation <StateBadge state={m.validation.state} />
        {m.validation.checked_at ? <span className="hint"> checked {formatTime(m.validation.checked_at)}</span> : null}
        {m.imported ? <span className="hint"> · imported by {m.provider} (read-only)</span> : null}
      </p>
      <div className="actions">
        <button type="button" disabled={busy} onClick={() => act('validate')}>
          Validate
        </button>
        {m.status === 'draft' ? (
          <button type="button" disabled={busy} onClick={() => act('publish')}>
            Publish
          </button>
        ) : null}
      </div>
      {actionError ? <ErrorNotice error={actionError} what="Action" /> : null}
      {m.validation.problems.length ? (
        <ul aria-label="Problems" className="problems">
          {m.validation.problems.map((p, i) => (
            <li key={i}>
              {p.kind} <strong>{p.name}</strong>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
      <h2>Metrics</h2>
      <DefinitionTable
        label="Metrics"
        rows={m.metrics.map((x) => [x.name, x.display_name, `${x.agg}(${x.expr ?? '*'})${x.filter ? ` where ${x.filter}` : ''}`, x.synonyms.join(', '), x.validation_state])}
        head={['Name', 'Display name', 'Computation', 'Synonyms', 'State']}
      />
      <h2>Dimensions</h2>
      <DefinitionTable
        label="Dimensions"
        rows={m.dimensions.map((d) => [d.name, d.dataset, d.kind === 'time' ? `time (${d.time_grains.join(', ')})` : 'categorical', d.synonyms.join(', '), d.validation_state])}
        head={['Name', 'Dataset', 'Kind', 'Synonyms', 'State']}
      />
      <h2>Datasets</h2>
      <DefinitionTable
        label="Datasets"
        rows={m.datasets.map((d) => [d.name, `${d.catalog}.${d.schema_name}.${d.table_name}`, d.primary_key.join(', '), d.validation_state])}
        head={['Name', 'Table', 'Primary key', 'State']}
      />
      <h2>Relationships</h2>
      <DefinitionTable
        label="Relationships"
        rows={m.relationships.map((r) => [r.name, `${r.left_dataset} → ${r.right_dataset}`, r.kind, r.join_columns.map((j) => `${j.left} = ${j.right}`).join(', '), r.validation_state])}
        head={['Name', 'Joins', 'Kind', 'On', 'State']}
      />
      {m.metrics.length ? <CompilePanel ws={props.ws} model={m} /> : null}
    </>
  );
}

function DefinitionTable(props: { label: string; head: string[]; rows: string[][] }) {
  if (!props.rows.length) return <p className="hint">None.</p>;
  return (
    <table className="data" aria-label={props.label}>
      <thead>
        <tr>
          {props.head.map((h) => (
            <th key={h}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => (
          <tr key={r[0]}>
            {r.map((c, i) => (
              <td key={i}>{c}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * One or more metrics and some dimensions legal for all of them compiled to SQL, laid out for reading (the
 * worksheet's formatter: a clause a line, a SELECT item a line), ready to open in a worksheet.
 */
function CompilePanel(props: { ws: string; model: SemanticModel }) {
  const [metrics, setMetrics] = useState<string[]>([props.model.metrics[0].name]);
  const [chosen, setChosen] = useState<string[]>([]);
  const [grain, setGrain] = useState<'' | (typeof GRAINS)[number]>('');
  const [compiled, setCompiled] = useState<{ sql: string } | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  // The dimensions every chosen metric can be grouped by (each metric's legal set, intersected, in the first's order).
  const legal = useAsync(
    async (signal) => {
      const sets = await Promise.all(
        metrics.map((metric) => call('GET /api/workspaces/{workspace}/semantic/models/{model}/metrics/{metric}/dimensions', { path: { workspace: props.ws, model: props.model.slug, metric }, signal })),
      );
      const [first = [], ...rest] = sets;
      return first.filter((d) => rest.every((s) => s.some((x) => x.name === d.name)));
    },
    [props.ws, props.model.slug, metrics.join('\n')],
  );
  const compile = async () => {
    setError(undefined);
    try {
      const body = { model: props.model.slug, metrics, dimensions: chosen.filter((d) => (legal.data ?? []).some((x) => x.name === d)), ...(grain ? { grain } : {}) };
      const out = await call('POST /api/workspaces/{workspace}/semantic/compile', { path: { workspace: props.ws }, body });
      // (loaded on use: the formatter carries DuckDB's function list, which the first screen does not need)
      const { formatSql } = await import('../worksheet/formatSql.ts');
      setCompiled({ sql: formatSql(out.sql) });
    } catch (e) {
      setCompiled(undefined);
      setError(e);
    }
  };
  const toggle = (name: string) => setChosen((c) => (c.includes(name) ? c.filter((x) => x !== name) : [...c, name]));
  const toggleMetric = (name: string) => {
    // At least one metric stays chosen; the list keeps the model's order.
    const next = metrics.includes(name) ? metrics.filter((x) => x !== name) : props.model.metrics.map((x) => x.name).filter((x) => x === name || metrics.includes(x));
    if (!next.length) return;
    setMetrics(next);
    setCompiled(undefined);
  };
  return (
    <section aria-label="Compiled SQL">
      <h2>Compiled SQL</h2>
      <fieldset>
        <legend>Metrics</legend>
        {props.model.metrics.map((x) => (
          <label key={x.name} className="inline">
            <input type="checkbox" checked={metrics.includes(x.name)} disabled={metrics.length === 1 && metrics[0] === x.name} onChange={() => toggleMetric(x.name)} /> {x.display_name}
          </label>
        ))}
      </fieldset>
      <label className="inline">
        Grain{' '}
        <select value={grain} onChange={(e) => setGrain(e.target.value as typeof grain)}>
          <option value="">none</option>
          {GRAINS.map((g) => (
            <option key={g} value={g}>
              {g}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>Dimensions</legend>
        {legal.error ? <ErrorNotice error={legal.error} what="Dimensions" /> : null}
        {(legal.data ?? []).map((d) => (
          <label key={d.name} className="inline">
            <input type="checkbox" checked={chosen.includes(d.name)} onChange={() => toggle(d.name)} /> {d.display_name}
            {d.join_path ? <span className="hint"> via {d.join_path}</span> : null}
          </label>
        ))}
      </fieldset>
      <button type="button" onClick={compile}>
        Compile
      </button>
      {error ? <ErrorNotice error={error} what="Compile" /> : null}
      {compiled ? (
        <>
          <pre aria-label="SQL" className="sql">
            {compiled.sql}
          </pre>
          <button
            type="button"
            onClick={() => {
              openInWorksheet(props.ws, compiled.sql);
              navigate(`/w/${enc(props.ws)}/worksheets`);
            }}
          >
            Open in worksheet
          </button>
        </>
      ) : null}
    </section>
  );
}
