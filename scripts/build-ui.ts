// Builds the web app at install time (npm's postinstall), so a fresh clone serves the UI with no extra command.
// An install without dev dependencies has no Vite: then the api serves a page saying how to build the UI.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
let vite: string;
try {
  // vite's exports do not list its bin: find it beside its package.json
  vite = join(dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
} catch {
  console.warn('eider: Vite is not installed (dev dependencies omitted); the web app is not built');
  process.exit(0);
}
// The app's API types are written from the server's own route declarations first, so the build uses the contract
// the server serves (tests/openapiTypes.test.ts fails when the committed copy is stale).
const types = spawnSync(process.execPath, ['bin/eider.ts', 'openapi', '--typescript'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
if (types.status === 0 && types.stdout) writeFileSync('ui/src/api/generated.ts', types.stdout);
else console.warn(`eider: could not write the web app's API types (${types.stderr?.trim() || 'no output'}); building with the committed ones`);
const r = spawnSync(process.execPath, [vite, 'build', '--config', 'ui/vite.config.ts', '--logLevel', 'warn'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
