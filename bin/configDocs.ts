// docs/configuration.md: every variable of every process, rendered from the tables the loaders read.
import { CONFIG_VARIABLES } from '../runtime/config.ts';
import { AGENT_VARIABLES } from '../agent/config.ts';
import { CATALOG_VARIABLES } from '../catalog/config.ts';
import { renderVariableTables } from '../settings/variablesDocs.ts';

export function renderConfigDocs(): string {
  const out = [
    '# Configuration',
    '',
    'Generated from the variable tables of `runtime/config.ts` (api and `eider up`), `agent/config.ts` and',
    '`catalog/config.ts` by `UPDATE_GENERATED=1 npx vitest run tests/configuration.test.ts`; do not edit by hand. One',
    'loader reads them all (`settings/variables.ts`). A bad value stops the process with one line naming it. A',
    'variable marked "not built" is validated, but its feature does not exist yet: setting it logs one warning naming',
    'the feature, and it has no effect. Secrets are never printed or logged.',
    ...renderVariableTables([CONFIG_VARIABLES, AGENT_VARIABLES, CATALOG_VARIABLES]),
  ];
  return `${out.join('\n')}\n`;
}
