// Renders variable tables as Markdown for docs/configuration.md, so the page cannot drift from what the loaders
// accept (bin/configDocs.ts assembles the page; tests/configuration.test.ts compares it with the committed one).
import type { VarSpec, VariableTable } from './variables.ts';

const GROUP_TITLES: Record<string, string> = {
  process: 'Processes and local layout',
  control: 'Control plane',
  identity: 'Identity and SSO',
  ha: 'High availability',
  loops: 'Background loops',
  sessions: 'SQL sessions',
  elastic: 'Elastic compute',
  assistant: 'AI assistant',
  mcp: 'Tool-protocol endpoint and observability',
  agent: 'Agent (`eider agent`)',
  catalog: 'Catalog service (`eider catalog`)',
};

type Spec = VarSpec;

function form(spec: Spec): string {
  const k = spec.kind as { t: string; min?: number; max?: number; values?: readonly string[]; shape?: string; protocols?: readonly string[] };
  const range = `${k.min !== undefined ? ` ≥ ${k.min}` : ''}${k.max !== undefined ? `, ≤ ${k.max}` : ''}`;
  switch (k.t) {
    case 'int':
      return `integer${range}`;
    case 'number':
      return `number${range}`;
    case 'bool':
      return 'true or false (or 1 or 0)';
    case 'enum':
      return (k.values ?? []).map((v) => `\`${v}\``).join(', ');
    case 'json':
      return `JSON ${k.shape}`;
    case 'url':
      return `URL (${(k.protocols ?? []).join(' ')})`;
    case 'bytes':
      return 'bytes (64MiB, 1GB, …)';
    case 'list':
      return 'list (commas or spaces)';
    default:
      return 'text';
  }
}

/** The tables, grouped, each group a Markdown section. */
export function renderVariableTables(tables: readonly VariableTable[]): string[] {
  const out: string[] = [];
  const byGroup = new Map<string, [string, Spec][]>();
  for (const table of tables) {
    for (const [name, spec] of Object.entries(table)) {
      const list = byGroup.get(spec.group) ?? [];
      list.push([name, spec]);
      byGroup.set(spec.group, list);
    }
  }
  for (const [group, vars] of byGroup) {
    out.push('', `## ${GROUP_TITLES[group] ?? group}`, '', '| Variable | Default | Form | State |', '|---|---|---|---|');
    for (const [name, spec] of vars) {
      const def = spec.def === undefined ? 'required' : spec.def === null ? 'unset' : spec.def === '' ? 'empty' : spec.secret ? '(generated or placeholder)' : `\`${spec.def}\``;
      const state = [spec.notBuilt ? `not built: ${spec.notBuilt}` : 'in use', spec.secret ? 'secret' : ''].filter(Boolean).join('; ');
      out.push(`| \`${name}\` | ${def} | ${form(spec)} | ${state} |`);
    }
  }
  return out;
}
