// A real OpenLDAP directory for the LDAP sign-in tests: Debian's slapd (installed by scripts/ensure-slapd.sh when
// missing) started on free ports with a throwaway configuration, a CA and server certificate made with openssl for
// ldaps:// and StartTLS, the memberof overlay so users carry memberOf, and entries added over LDAP as the root DN.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Attribute, Change, Client } from 'ldapts';
import { freePort } from '../../runtime/postgres.ts';
import { pollUntil, processState } from './processes.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export const BASE_DN = 'dc=example,dc=com';
const ROOT_DN = `cn=admin,${BASE_DN}`;
const ROOT_PW = 'directory-root-password';
export const SERVICE_DN = `cn=eider-service,${BASE_DN}`;
export const SERVICE_PW = 'service-bind-password';

interface DirectoryUser {
  uid: string;
  email: string;
  name: string;
  password: string;
  groups?: string[];
}

export interface Slapd {
  ldapUrl: string;
  ldapsUrl: string;
  caFile: string;
  /** SIGSTOP, resolved once the kernel shows every thread stopped: a directory that accepts TCP and never answers. */
  freeze(): Promise<void>;
  /** Whether slapd is stopped right now (its /proc state is `T`). */
  frozen(): boolean;
  thaw(): void;
  groupDn(cn: string): string;
  /** Adds users and the groups they name (groupOfNames; memberOf is kept by the overlay). */
  seed(users: DirectoryUser[]): Promise<void>;
  /** Removes a user from a group. */
  leaveGroup(uid: string, group: string): Promise<void>;
  stop(): Promise<void>;
}

function ensureSlapd(): string {
  return execFileSync('sh', [join(ROOT, 'scripts/ensure-slapd.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

function makeCertificates(dir: string) {
  const ossl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Eider Test CA');
  ossl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  ossl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext');
}

const listening = (port: number) =>
  new Promise<boolean>((res) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), res(true)));
    s.once('error', () => res(false));
  });

async function waitForPort(port: number, child: ChildProcess, logs: () => string): Promise<void> {
  const state = await pollUntil(
    async () => (child.exitCode !== null ? 'exited' : (await listening(port)) ? 'open' : 'closed'),
    (s) => s !== 'closed',
    20_000,
    50,
  );
  if (state === 'exited') throw new Error(`slapd exited (${child.exitCode}): ${logs()}`);
  if (state === 'closed') throw new Error(`slapd did not listen on ${port}: ${logs()}`);
}

export async function startSlapd(): Promise<Slapd> {
  const bin = ensureSlapd();
  const dir = mkdtempSync(join(tmpdir(), 'eider-slapd-'));
  mkdirSync(join(dir, 'db'));
  makeCertificates(dir);
  const conf = [
    'include /etc/ldap/schema/core.schema',
    'include /etc/ldap/schema/cosine.schema',
    'include /etc/ldap/schema/inetorgperson.schema',
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    'moduleload memberof',
    `pidfile ${dir}/slapd.pid`,
    `TLSCACertificateFile ${dir}/ca.pem`,
    `TLSCertificateFile ${dir}/server.pem`,
    `TLSCertificateKeyFile ${dir}/server.key`,
    'database mdb',
    'maxsize 67108864',
    `suffix "${BASE_DN}"`,
    `rootdn "${ROOT_DN}"`,
    `rootpw ${ROOT_PW}`,
    `directory ${dir}/db`,
    'overlay memberof',
    // Users may not read each other's passwords; anyone bound may search.
    'access to attrs=userPassword by self write by anonymous auth by * none',
    'access to * by users read by * none',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'slapd.conf'), conf);
  const [port, tlsPort] = [await freePort(), await freePort()];
  const ldapUrl = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${tlsPort}`;
  let logs = '';
  // -d keeps slapd in the foreground (so it dies with its test); level 0 logs nothing but errors. It gets its own
  // session, so no job-control signal aimed at the test runner's process group reaches it: the kernel sends SIGHUP and
  // SIGCONT to a group with a stopped member when that group becomes orphaned, which would thaw a frozen slapd.
  const child = spawn(bin, ['-f', join(dir, 'slapd.conf'), '-h', `${ldapUrl}/ ${ldapsUrl}/`, '-d', '0'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout!.on('data', (d) => (logs += d));
  child.stderr!.on('data', (d) => (logs += d));
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  await waitForPort(port, child, () => logs);
  await waitForPort(tlsPort, child, () => logs);

  const asRoot = async <T,>(fn: (c: Client) => Promise<T>): Promise<T> => {
    const c = new Client({ url: ldapUrl, timeout: 5000 });
    try {
      await c.bind(ROOT_DN, ROOT_PW);
      return await fn(c);
    } finally {
      await c.unbind().catch(() => undefined);
    }
  };
  const groupDn = (cn: string) => `cn=${cn},ou=groups,${BASE_DN}`;
  const userDn = (uid: string) => `uid=${uid},ou=people,${BASE_DN}`;
  await asRoot(async (c) => {
    await c.add(BASE_DN, { objectClass: ['top', 'dcObject', 'organization'], o: 'Example', dc: 'example' });
    for (const ou of ['people', 'groups']) await c.add(`ou=${ou},${BASE_DN}`, { objectClass: ['organizationalUnit'], ou });
    await c.add(SERVICE_DN, { objectClass: ['person', 'simpleSecurityObject'], cn: 'eider-service', sn: 'service', userPassword: SERVICE_PW });
  });

  const frozen = () => processState(child.pid!) === 'T';
  return {
    ldapUrl,
    ldapsUrl,
    caFile: join(dir, 'ca.pem'),
    async freeze() {
      child.kill('SIGSTOP');
      if (!(await pollUntil(async () => frozen(), (f) => f, 5_000, 10))) throw new Error('slapd did not stop on SIGSTOP');
    },
    frozen,
    thaw: () => void child.kill('SIGCONT'),
    groupDn,
    async seed(users) {
      await asRoot(async (c) => {
        for (const u of users) {
          await c.add(userDn(u.uid), {
            objectClass: ['inetOrgPerson'],
            uid: u.uid,
            cn: u.name,
            sn: u.name.split(' ').pop()!,
            displayName: u.name,
            mail: u.email,
            userPassword: u.password,
          });
        }
        const groups = new Set(users.flatMap((u) => u.groups ?? []));
        for (const g of groups) {
          const members = users.filter((u) => u.groups?.includes(g)).map((u) => userDn(u.uid));
          const exists = await c.search(groupDn(g), { scope: 'base' }).then(() => true, () => false);
          if (exists) await c.modify(groupDn(g), new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: members }) }));
          else await c.add(groupDn(g), { objectClass: ['groupOfNames'], cn: g, member: members });
        }
      });
    },
    async leaveGroup(uid, group) {
      await asRoot((c) => c.modify(groupDn(group), new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [userDn(uid)] }) })));
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
