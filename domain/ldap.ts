// LDAP bind authentication (docs/api-decisions.md "Federated sign-in"): a service bind, one search for the user with
// LDAP_USER_FILTER (the email escaped per RFC 4515), then a bind as the entry found with the given password.
// Every directory operation is bounded by LDAP_TIMEOUT_S; a directory that does not answer, or refuses the service
// bind, is "unavailable" (503), never a reason to let anyone in.
import { readFileSync } from 'node:fs';
import { Client, InvalidCredentialsError, type Entry } from 'ldapts';
import { ConfigError, type Config } from '../runtime/config.ts';
import { AppError, unavailable } from './errors.ts';

export interface LdapSettings {
  url: string;
  startTls: boolean;
  bindDn: string | null;
  bindPassword: string | null;
  searchBase: string;
  userFilter: string;
  emailAttr: string;
  nameAttr: string;
  groupAttr: string;
  /** group DN (normalized: lowercase, no blanks around separators) to global role */
  groupRoleMap: ReadonlyMap<string, 'admin' | 'member'>;
  /** PEM bundle read once at startup */
  ca: Buffer | null;
  timeoutMs: number;
}

export interface DirectoryUser {
  dn: string;
  email: string;
  name: string;
  groups: string[];
}

/** RFC 4515 §3: the characters that would change a filter's structure, written as \XX escapes. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** DNs compare without case and without blanks around `,` and `=`, as directories treat them. */
export const normalizeDn = (dn: string) => dn.trim().toLowerCase().replace(/\s*([,=])\s*/g, '$1');

/** The LDAP settings, or null when LDAP sign-in is off. Config cross-checks (runtime/config.ts) ran already. */
export function ldapSettingsFrom(config: Config): LdapSettings | null {
  if (!config.LDAP_ENABLED) return null;
  const map = new Map<string, 'admin' | 'member'>();
  for (const [dn, role] of Object.entries(config.LDAP_GROUP_ROLE_MAP)) map.set(normalizeDn(dn), role as 'admin' | 'member');
  return {
    url: config.LDAP_SERVER_URI!,
    startTls: config.LDAP_USE_START_TLS,
    bindDn: config.LDAP_BIND_DN,
    bindPassword: config.LDAP_BIND_PASSWORD,
    searchBase: config.LDAP_USER_SEARCH_BASE!,
    userFilter: config.LDAP_USER_FILTER,
    emailAttr: config.LDAP_EMAIL_ATTR,
    nameAttr: config.LDAP_NAME_ATTR,
    groupAttr: config.LDAP_GROUP_ATTR,
    groupRoleMap: map,
    ca: config.LDAP_TLS_CA_CERT ? readCa(config.LDAP_TLS_CA_CERT) : null,
    timeoutMs: config.LDAP_TIMEOUT_S * 1000,
  };
}

function readCa(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new ConfigError('LDAP_TLS_CA_CERT', `LDAP_TLS_CA_CERT: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'}); expected a PEM CA bundle`);
  }
}

/** The global role the user's groups map to: admin wins; null when no group is mapped (the role is left as is). */
export function roleFromGroups(groups: readonly string[], map: ReadonlyMap<string, 'admin' | 'member'>): 'admin' | 'member' | null {
  if (map.size === 0) return null;
  const roles = groups.map((g) => map.get(normalizeDn(g))).filter((r) => r !== undefined);
  return roles.includes('admin') ? 'admin' : 'member';
}

const directoryDown = (why: string) => unavailable(`the directory is unavailable (${why}); local accounts can still sign in`, 'directory_unavailable');

const first = (v: Entry[string] | undefined): string | null => {
  const x = Array.isArray(v) ? v[0] : v;
  return x === undefined ? null : Buffer.isBuffer(x) ? x.toString('utf8') : String(x);
};
const all = (v: Entry[string] | undefined): string[] => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => (Buffer.isBuffer(x) ? x.toString('utf8') : String(x))));

/** Why a directory call failed, for the 503's message: never the credentials, only the kind of failure. */
function reason(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string') return code; // ECONNREFUSED, ETIMEDOUT, certificate errors…
  const name = (e as Error)?.name ?? 'error';
  return /timeout/i.test(name) || /timeout/i.test((e as Error)?.message ?? '') ? 'no answer in time' : name;
}

/**
 * The directory's user for these credentials, or null when they are wrong (unknown email, several entries, bad
 * password). Throws 503 directory_unavailable when the directory cannot be asked.
 */
export async function authenticateLdap(s: LdapSettings, email: string, password: string): Promise<DirectoryUser | null> {
  // An empty password would be an unauthenticated bind, which directories answer with success (RFC 4513 §5.1.2).
  if (password === '' || email === '') return null;
  // Connection TLS options only for ldaps://: given on an ldap:// client, ldapts's StartTLS upgrade fails (measured:
  // ECONNRESET against slapd 2.5), so StartTLS gets the CA in its own call instead.
  const tlsOptions = s.ca && s.url.startsWith('ldaps:') ? { ca: [s.ca] } : undefined;
  const client = new Client({ url: s.url, timeout: s.timeoutMs, connectTimeout: s.timeoutMs, tlsOptions });
  // ldapts bounds each operation; this bounds the whole exchange too (StartTLS, binds, search) by one more period.
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('directory timeout'), { code: 'ETIMEDOUT' })), s.timeoutMs * 2);
  });
  try {
    return await Promise.race([deadline, exchange(client, s, email, password)]);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw directoryDown(reason(e));
  } finally {
    clearTimeout(timer);
    void client.unbind().catch(() => undefined);
  }
}

async function exchange(client: Client, s: LdapSettings, email: string, password: string): Promise<DirectoryUser | null> {
  let stage = 'connect';
  try {
    if (s.startTls) {
      stage = 'StartTLS';
      await client.startTLS(s.ca ? { ca: [s.ca] } : {});
    }
    stage = 'service bind';
    if (s.bindDn) await client.bind(s.bindDn, s.bindPassword ?? '');
    stage = 'search';
    const filter = s.userFilter.replaceAll('{email}', escapeFilterValue(email));
    const { searchEntries } = await client.search(s.searchBase, {
      scope: 'sub',
      filter,
      attributes: [s.emailAttr, s.nameAttr, s.groupAttr],
      sizeLimit: 2,
      timeLimit: Math.ceil(s.timeoutMs / 1000),
    });
    // Zero entries: no such user. Two: the filter is ambiguous, and signing in as either would be a guess.
    if (searchEntries.length !== 1) return null;
    const entry = searchEntries[0];
    stage = 'user bind';
    try {
      await client.bind(entry.dn, password);
    } catch (e) {
      if (e instanceof InvalidCredentialsError) return null;
      throw e;
    }
    const mail = first(entry[s.emailAttr]) ?? email;
    return { dn: entry.dn, email: mail.toLowerCase(), name: first(entry[s.nameAttr]) ?? mail, groups: all(entry[s.groupAttr]) };
  } catch (e) {
    if (e instanceof InvalidCredentialsError) throw directoryDown('the service bind was refused');
    // A search that hits the size limit means several entries matched: ambiguous, not an outage.
    if ((e as Error)?.name === 'SizeLimitExceededError') return null;
    throw directoryDown(`${stage}: ${reason(e)}`);
  }
}
