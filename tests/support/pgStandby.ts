// A PostgreSQL primary with a synchronous streaming standby, from Debian's server programs (the embedded PostgreSQL
// has no pg_basebackup), run as the `postgres` user when the tests run as root (the server refuses root). For the
// failover test: kill the primary, promote the standby.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../runtime/postgres.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export interface PrimaryAndStandby {
  primaryPort: number;
  standbyPort: number;
  /** A DATABASE_URL naming both hosts, primary first. */
  url: string;
  /** The primary's postmaster pid. */
  primaryPid(): number;
  promoteStandby(): void;
  stop(): void;
}

/** `ports`: the primary's and the standby's (free ones when not given). */
export async function primaryWithStandby(opts: { ports?: [number, number] } = {}): Promise<PrimaryAndStandby> {
  const bin = execFileSync('sh', [join(ROOT, 'scripts/ensure-postgresql-server.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const asRoot = process.getuid?.() === 0;
  const pwd = (() => {
    if (!asRoot) return null;
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
    return line ? { uid: Number(line.split(':')[2]), gid: Number(line.split(':')[3]) } : null;
  })();
  const dir = mkdtempSync(join(tmpdir(), 'eider-failover-'));
  chmodSync(dir, 0o755);
  if (pwd) chownSync(dir, pwd.uid, pwd.gid);
  const sh = (cmd: string, ...args: string[]) => {
    const full = pwd ? ['runuser', '-u', 'postgres', '--', `${bin}/${cmd}`, ...args] : [`${bin}/${cmd}`, ...args];
    const r = spawnSync(full[0], full.slice(1), { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const [primaryPort, standbyPort] = opts.ports ?? [await freePort(), await freePort()];
  const primary = join(dir, 'primary');
  const standby = join(dir, 'standby');
  sh('initdb', '-D', primary, '-U', 'eider', '--auth=trust', '-E', 'UTF8', '--no-sync');
  appendFileSync(
    join(primary, 'postgresql.conf'),
    [
      `port = ${primaryPort}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'fsync = off',
      '',
    ].join('\n'),
  );
  appendFileSync(join(primary, 'pg_hba.conf'), 'host replication eider 127.0.0.1/32 trust\n');
  sh('pg_ctl', '-D', primary, '-l', join(dir, 'primary.log'), '-w', 'start');
  sh('psql', '-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'eider', '-d', 'postgres', '-c', 'create database eider');
  sh('pg_basebackup', '-d', `host=127.0.0.1 port=${primaryPort} user=eider application_name=standby1`, '-D', standby, '-R', '-X', 'stream', '-c', 'fast');
  appendFileSync(join(standby, 'postgresql.conf'), `port = ${standbyPort}\n`);
  sh('pg_ctl', '-D', standby, '-l', join(dir, 'standby.log'), '-w', 'start');
  // No acknowledged commit is lost: from now on COMMIT returns once the standby has it (set only now, since the
  // database and the base backup above would wait for a standby that did not exist yet).
  const psql = (c: string) => sh('psql', '-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'eider', '-d', 'postgres', '-Atc', c);
  psql("alter system set synchronous_standby_names = 'standby1'");
  psql('select pg_reload_conf()');
  for (let i = 0; i < 100 && psql("select sync_state from pg_stat_replication where application_name = 'standby1'").trim() !== 'sync'; i++) {
    spawnSync('sleep', ['0.1']);
  }
  if (psql("select sync_state from pg_stat_replication where application_name = 'standby1'").trim() !== 'sync') throw new Error('the standby did not become synchronous');
  return {
    primaryPort,
    standbyPort,
    url: `postgres://eider@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/eider?target_session_attrs=read-write`,
    primaryPid: () => Number(readFileSync(join(primary, 'postmaster.pid'), 'utf8').split('\n')[0]),
    promoteStandby: () => void sh('pg_ctl', '-D', standby, '-w', 'promote'),
    stop: () => {
      for (const d of [primary, standby]) {
        try {
          sh('pg_ctl', '-D', d, '-m', 'immediate', 'stop');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
