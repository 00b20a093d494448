// Summarizes V8 CPU profiles (`.cpuprofile`, written by `node --cpu-prof`; the benches that start an api or agents
// pass it on through API_NODE_OPTIONS / AGENT_NODE_OPTIONS): where a process's CPU went, by area (a package, one of
// our folders, Node's internals, GC) and by function, as self time. Run by hand:
// `node bench/cpuProfile.ts <file-or-dir> [top]`; every profile in a directory is summed.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const target = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (!target) {
  console.error('usage: node bench/cpuProfile.ts <file.cpuprofile | directory> [top]');
  process.exit(2);
}
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(target, f))
  : [target];

/** The area a frame's code belongs to: an npm package, one of the project's folders, Node itself, or V8's own. */
function areaOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node';
  const own = /\/(actors|agent|bench|bin|catalog|domain|http|iceberg|machines|protocol|runtime|settings|telemetry)\//.exec(url);
  return own ? `eider/${own[1]}` : url;
}

const byArea = new Map<string, number>();
const byFunction = new Map<string, number>();
let total = 0;
let idle = 0;
for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  for (let i = 0; i < p.samples.length; i++) {
    const n = nodes.get(p.samples[i])!;
    const us = p.timeDeltas[i] ?? 0;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const area = areaOf(url, functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    const where = url ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(?=[a-z]+\/)/, '')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
}

const ms = (us: number) => (us / 1000).toFixed(1).padStart(8);
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
console.log(`${files.length} profile(s): ${ms(total).trim()} ms on CPU (idle ${ms(idle).trim()} ms not counted)`);
console.log('by area (self time):');
for (const [area, us] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${ms(us)} ms ${pct(us)}  ${area}`);
console.log(`top ${top} functions (self time):`);
for (const [fn, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${ms(us)} ms ${pct(us)}  ${fn}`);
