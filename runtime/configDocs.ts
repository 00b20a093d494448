// Renders the configuration table of docs/configuration.md from CONFIG_VARIABLES, so the page cannot drift from
// what the loader accepts (tests/configuration.test.ts compares the two).
import { CONFIG_VARIABLES, type ConfigName } from './config.ts';

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
};

type Spec = (typeof CONFIG_VARIABLES)[ConfigName] & { secret?: boolean; notBuilt?: string };

function form(spec: Spec): string {
  const k = spec.kind as { t: string; min?: number; max?: number; values?: readonly string[]; shape?: string; protocols?: readonly string[] };
  const range = `${k.min !== undefined ? ` ≥ ${k.min}` : ''}${k.max !== undefined ? `, ≤ ${k.max}` : ''}`;
  switch (k.t) {
    case 'int':
      return `integer${range}`;
    case 'number':
      return `number${range}`;
    case 'bool':
      return 'true or false';
    case 'enum':
      return (k.values ?? []).map((v) => `\`${v}\``).join(', ');
    case 'json':
      return `JSON ${k.shape}`;
    case 'url':
      return `URL (${(k.protocols ?? []).join(' ')})`;
    default:
      return 'text';
  }
}

export function renderConfigDocs(): string {
  const out: string[] = [
    '# Configuration',
    '',
    'Generated from `CONFIG_VARIABLES` in `runtime/config.ts` by `UPDATE_GENERATED=1 npx vitest run tests/configuration.test.ts`;',
    'do not edit by hand. Every variable is optional. A bad value stops the process with one line naming it.',
    'A variable marked "not built" is validated, but its feature does not exist yet: setting it logs one warning',
    'naming the feature, and it has no effect. Secrets are never printed or logged. The agent reads its own',
    'variables, listed in `docs/agent.md`.',
  ];
  const byGroup = new Map<string, [string, Spec][]>();
  for (const [name, spec] of Object.entries(CONFIG_VARIABLES) as [string, Spec][]) {
    const list = byGroup.get(spec.group) ?? [];
    list.push([name, spec]);
    byGroup.set(spec.group, list);
  }
  for (const [group, vars] of byGroup) {
    out.push('', `## ${GROUP_TITLES[group] ?? group}`, '', '| Variable | Default | Form | State |', '|---|---|---|---|');
    for (const [name, spec] of vars) {
      const def = spec.def === null ? 'unset' : spec.def === '' ? 'empty' : spec.secret ? '(generated or placeholder)' : `\`${spec.def}\``;
      const state = [spec.notBuilt ? `not built: ${spec.notBuilt}` : 'in use', spec.secret ? 'secret' : ''].filter(Boolean).join('; ');
      out.push(`| \`${name}\` | ${def} | ${form(spec)} | ${state} |`);
    }
  }
  return `${out.join('\n')}\n`;
}
