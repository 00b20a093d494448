// Every request the app makes goes through the typed client (client.ts: call, callStream), whose types come from the
// server's operation map; a raw fetch or a hand-built API path elsewhere would bring back untyped calls.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = join(import.meta.dirname, '..');
const CLIENT = 'api/client.ts';
const GENERATED = 'api/generated.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) && !p.includes(`${join(SRC, 'testing')}`) ? [p] : [];
  });
}

/** Lines of the app's code (comments left out) that match `pattern`, as `file:line: text`. */
function offending(pattern: RegExp, allowed: (file: string, line: string) => boolean): string[] {
  const found: string[] = [];
  for (const path of sources(SRC)) {
    const file = relative(SRC, path);
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const code = line.replace(/^\s*(\/\/|\*|\/\*).*$/, '');
        if (pattern.test(code) && !allowed(file, code)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('the web app', () => {
  it('finds its sources', () => {
    expect(sources(SRC).map((p) => relative(SRC, p))).toEqual(expect.arrayContaining([CLIENT, 'app/App.tsx', 'screens/HistoryScreen.tsx']));
  });

  it('makes requests only in the typed client', () => {
    expect(offending(/\bfetch\s*\(|XMLHttpRequest|EventSource|sendBeacon/, (file) => file === CLIENT)).toEqual([]);
  });

  it('names API paths only as operations of the typed client', () => {
    // A path literal is allowed as the operation named in call/callStream/usePaged ('GET /api/…') and in the types
    // that take one (ResponseOf<'GET /api/…'>); the OIDC sign-in is a navigation of the browser, not a call.
    const operation = /['`"](GET|POST|PUT|PATCH|DELETE) \/api\//g;
    expect(
      offending(/['`"]\/api\//, (file, line) => file === CLIENT || file === GENERATED || (file === 'screens/SignInScreen.tsx' && /href=\{`\/api\/auth\/oidc\//.test(line))),
    ).toEqual([]);
    // and each operation named is spelled as the map spells it (the typecheck holds the rest)
    const named = sources(SRC).flatMap((p) => [...readFileSync(p, 'utf8').matchAll(operation)].map((m) => m[0]));
    expect(named.length).toBeGreaterThan(100);
  });

  it('keeps the client free of untyped entry points', () => {
    const client = readFileSync(join(SRC, CLIENT), 'utf8');
    const exported = [...client.matchAll(/^export (?:async )?(?:function|const) (\w+)/gm)].map((m) => m[1]).sort();
    expect(exported).toEqual(['call', 'callStream', 'enc', 'pathOf', 'setUnauthorizedHandler', 'withQuery']);
  });
});
