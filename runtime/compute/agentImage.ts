// The elastic agent's container image, built on this machine with no registry: a root filesystem holding the Node
// binary that runs Eider (and the shared libraries it and the native addons link), the agent's own source files (those
// agent/cli.ts reaches) and the packages they need, imported into the Docker Engine as one layer (`docker import`).
// The tag carries a digest of the content, so an unchanged tree is not imported twice.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

/** The user the agent runs as in its container: nobody, with no home and no shell. */
export const AGENT_IMAGE_USER = '65534:65534';
const ENTRY = 'agent/cli.ts';
const IMPORT = /(?:^|[\s;}])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;}])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The project files agent/cli.ts reaches through relative imports, and the packages they name. */
function agentSourceFiles(root: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (abs: string) => {
    const rel = relative(root, abs);
    if (files.has(rel)) return;
    files.add(rel);
    const text = readFileSync(abs, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec.startsWith('node:')) continue;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(abs), spec);
        if (existsSync(target) && statSync(target).isFile()) visit(target);
        continue;
      }
      // a bare name: the package is its first segment, or its first two under a scope
      const parts = spec.split('/');
      packages.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
    }
  };
  visit(join(root, ENTRY));
  return { files: [...files].sort(), packages: [...packages].sort() };
}

/** `names` and every package they depend on (dependencies, optional and peer ones that are installed), top-level. */
function packageClosure(nodeModules: string, names: readonly string[]): string[] {
  const seen = new Set<string>();
  const walk = (name: string) => {
    if (seen.has(name)) return;
    const manifest = join(nodeModules, name, 'package.json');
    // A built-in or a type-only import (no package at run time), or an optional dependency of another platform.
    if (!existsSync(manifest)) return;
    seen.add(name);
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    for (const deps of [pkg.dependencies, pkg.optionalDependencies, pkg.peerDependencies]) for (const d of Object.keys(deps ?? {})) walk(d);
  };
  for (const n of names) walk(n);
  return [...seen].sort();
}

/** The shared libraries `binaries` link (as `ldd` names them), the dynamic loader included. */
function sharedLibraries(binaries: readonly string[]): string[] {
  const libs = new Set<string>();
  for (const b of binaries) {
    const out = execFileSync('ldd', [b], { encoding: 'utf8' });
    for (const line of out.split('\n')) {
      const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
      if (m) libs.add(m[1]);
    }
  }
  return [...libs].sort();
}

function nativeAddons(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) nativeAddons(p, out);
    else if (e.name.endsWith('.node')) out.push(p);
  }
  return out;
}

interface AgentImagePlan {
  /** Absolute path on this machine → path in the image. */
  copies: Array<[string, string]>;
  /** The content digest the tag carries. */
  digest: string;
}

/** What goes into the image, and its digest (paths, sizes and modification times of everything copied). */
function planAgentImage(root: string, nodeBinary: string): AgentImagePlan {
  const nodeModules = join(root, 'node_modules');
  const { files, packages } = agentSourceFiles(root);
  const pkgs = packageClosure(nodeModules, packages);
  const copies: Array<[string, string]> = [[nodeBinary, '/usr/local/bin/node']];
  for (const f of files) copies.push([join(root, f), `/app/${f}`]);
  copies.push([join(root, 'package.json'), '/app/package.json']);
  for (const p of pkgs) copies.push([join(nodeModules, p), `/app/node_modules/${p}`]);
  const addons = pkgs.flatMap((p) => nativeAddons(join(nodeModules, p)));
  // The system's libraries only: an addon's own (libduckdb.so beside it) is in its package already.
  for (const lib of sharedLibraries([nodeBinary, ...addons])) if (!lib.startsWith(`${nodeModules}/`) && !lib.startsWith(`${root}/`)) copies.push([lib, lib]);
  const h = createHash('sha256');
  // Paths as they are in the image: the same tree reached through another checkout or symlink has the same digest.
  const stamp = (p: string, as: string) => {
    const s = statSync(p);
    h.update(`${as}\0${s.size}\0${s.mtimeMs}\n`);
    if (s.isDirectory()) for (const e of readdirSync(p).sort()) stamp(join(p, e), `${as}/${e}`);
  };
  for (const [from, to] of copies) stamp(from, to);
  return { copies, digest: h.digest('hex').slice(0, 16) };
}

export interface BuildAgentImageOptions {
  /** The Docker Engine's unix socket. */
  socketPath: string;
  /** Repository name; the tag is the content digest. */
  repository: string;
  root: string;
  nodeBinary: string;
  /** Also tag the image `<repository>:<alias>` (e.g. latest). */
  alias?: string;
}

function engine(socketPath: string, method: string, path: string, body?: NodeJS.ReadableStream): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: body ? { 'content-type': 'application/x-tar', 'transfer-encoding': 'chunked' } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

/**
 * Builds (or finds) the agent image; returns its reference `<repository>:<digest>`. The image runs
 * `node /app/agent/cli.ts` as nobody, from /app, with its data directory at /data (a tmpfs the provider mounts).
 */
export async function buildAgentImage(opts: BuildAgentImageOptions): Promise<{ image: string; built: boolean }> {
  const plan = planAgentImage(opts.root, opts.nodeBinary);
  const image = `${opts.repository}:${plan.digest}`;
  const found = await engine(opts.socketPath, 'GET', `/v1.41/images/${encodeURIComponent(image)}/json`);
  let built = false;
  if (found.status !== 200) {
    const stage = mkdtempSync(join(tmpdir(), 'eider-agent-image-'));
    try {
      for (const [from, to] of plan.copies) {
        mkdirSync(dirname(join(stage, to)), { recursive: true });
        cpSync(from, join(stage, to), { recursive: true, dereference: true });
      }
      // Mount points of a read-only root: the engine mounts its own /proc, /sys, /dev and /etc files over these.
      for (const d of ['proc', 'sys', 'dev', 'etc', 'tmp', 'data']) mkdirSync(join(stage, d), { recursive: true });
      writeFileSync(join(stage, 'etc/passwd'), 'nobody:x:65534:65534:nobody:/data:/nonexistent\n');
      writeFileSync(join(stage, 'etc/group'), 'nogroup:x:65534:\n');
      const changes = [
        `USER ${AGENT_IMAGE_USER}`,
        'WORKDIR /app',
        'ENV HOME=/data AGENT_DATA_DIR=/data DATA_DIR=/data',
        'ENTRYPOINT ["/usr/local/bin/node", "/app/agent/cli.ts"]',
      ];
      const query = new URLSearchParams({ fromSrc: '-', repo: opts.repository, tag: plan.digest });
      for (const c of changes) query.append('changes', c);
      const tar = spawn('tar', ['-C', stage, '--numeric-owner', '--owner=0', '--group=0', '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const r = await engine(opts.socketPath, 'POST', `/v1.41/images/create?${query}`, tar.stdout);
      // The engine streams progress as JSON lines and reports a failure in one of them, with status 200.
      const failure = r.text.split('\n').map((l) => { try { return JSON.parse(l); } catch { return null; } }).find((m) => m?.error);
      if (r.status !== 200 || failure) throw new Error(`docker import of ${image} failed: ${failure?.error ?? `${r.status} ${r.text.slice(0, 300)}`}`);
      built = true;
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  }
  if (opts.alias) {
    const t = await engine(opts.socketPath, 'POST', `/v1.41/images/${encodeURIComponent(image)}/tag?repo=${encodeURIComponent(opts.repository)}&tag=${encodeURIComponent(opts.alias)}`);
    if (t.status !== 201) throw new Error(`docker tag of ${image} answered ${t.status}: ${t.text.slice(0, 300)}`);
  }
  return { image, built };
}
