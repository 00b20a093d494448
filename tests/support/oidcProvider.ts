// A real OpenID provider for the sign-in tests: `oidc-provider` (a certified implementation) on a free port, with
// its development login and consent pages, accounts whose claims a test can change, and a small cookie-keeping
// browser that walks the whole redirect flow over HTTP the way a browser would.
import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';

interface Account {
  email: string;
  email_verified?: boolean;
  name: string;
  groups: string[];
}

export interface TestProvider {
  issuer: string;
  metadataUrl: string;
  accounts: Map<string, Account>;
  close(): Promise<void>;
}

/** The address a provider started on `port` will have (the api is configured with it before the provider starts). */
export const providerIssuer = (port: number) => `http://localhost:${port}`;

export async function startOidcProvider(port: number, clients: { client_id: string; client_secret: string; redirect_uris: string[] }[]): Promise<TestProvider> {
  // localhost, while the api is reached at 127.0.0.1: two hosts, so neither side sees the other's cookies.
  const issuer = providerIssuer(port);
  const accounts = new Map<string, Account>();
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ ...c, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' })),
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['test-provider-cookie-key'] },
    async findAccount(_ctx, id) {
      const a = accounts.get(id);
      if (!a) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, email: a.email, email_verified: a.email_verified ?? true, name: a.name, groups: a.groups }) };
    },
  });
  // The development pages complain loudly about being development pages: they are what this test wants.
  provider.on('server_error', () => undefined);
  const server: Server = createServer(provider.callback());
  await new Promise<void>((res) => server.listen(port, '127.0.0.1', res));
  return {
    issuer,
    metadataUrl: `${issuer}/.well-known/openid-configuration`,
    accounts,
    close: () => new Promise<void>((res) => (server.closeAllConnections(), server.close(() => res()))),
  };
}

export interface Step {
  url: string;
  status: number;
  location: string | null;
  setCookies: string[];
  text: string;
}

/** Cookies per host (a browser also shares them across ports; these tests keep the two sides on two hosts). */
export class TestBrowser {
  readonly jar = new Map<string, Map<string, string>>();

  cookieHeader(url: string): string {
    return [...(this.jar.get(new URL(url).hostname) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  setCookie(url: string, name: string, value: string) {
    const host = new URL(url).hostname;
    if (!this.jar.has(host)) this.jar.set(host, new Map());
    this.jar.get(host)!.set(name, value);
  }

  /** One request, no redirect followed; keeps the cookies it sets (a Max-Age=0 cookie is dropped). */
  async step(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Step> {
    const headers: Record<string, string> = {};
    const cookie = this.cookieHeader(url);
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    // Loopback hosts need no proxy; redirects are followed by the caller, step by step.
    const r = await fetch(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    const setCookies = r.headers.getSetCookie();
    const host = new URL(url).hostname;
    for (const c of setCookies) {
      const [pair] = c.split(';');
      const [name, ...rest] = pair.split('=');
      if (!this.jar.has(host)) this.jar.set(host, new Map());
      if (/max-age=0\b/i.test(c) || /expires=thu, 01 jan 1970/i.test(c)) this.jar.get(host)!.delete(name.trim());
      else this.jar.get(host)!.set(name.trim(), rest.join('='));
    }
    const location = r.headers.get('location');
    return { url, status: r.status, location: location ? new URL(location, url).href : null, setCookies, text: await r.text() };
  }

  /**
   * From the api's login URL to the moment the provider sends the browser back: signs in as `account` on the
   * provider's page and consents. Returns the callback URL, not yet visited.
   */
  async toCallback(loginUrl: string, account: string, callbackPrefix: string): Promise<string> {
    let s = await this.step(loginUrl);
    for (let hops = 0; hops < 20; hops++) {
      if (s.location?.startsWith(callbackPrefix)) return s.location;
      if (s.location) {
        s = await this.step(s.location);
        continue;
      }
      const action = /action="([^"]+)"/.exec(s.text)?.[1];
      const prompt = /name="prompt" value="([a-z]+)"/.exec(s.text)?.[1];
      if (!action || !prompt) throw new Error(`stuck at ${s.url} (${s.status}): ${s.text.slice(0, 300)}`);
      const form: Record<string, string> = prompt === 'login' ? { prompt, login: account, password: 'any' } : { prompt };
      s = await this.step(new URL(action, s.url).href, { form });
    }
    throw new Error('too many redirects');
  }
}
