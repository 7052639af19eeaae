// Dashboard sessions over plain HTTP (docs/api.md §19): sign-in and its lockout, the cookie's
// attributes, CSRF on the REST API, idle and absolute expiry, sign-out, password change, team
// routes by role; and the failure limiter on its own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { FailureLimiter } from '../../src/limits/failures';
import { loadConfig } from '../../src/config';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn({ 'auth.session_idle_timeout': '1h', 'auth.session_lifetime': '2h' });
});
afterAll(() => p.stop());

/** The answer to a sign-in (docs/api.md §19), or an error's name and message. */
interface SignInBody {
  user: { email: string; role: string; totp_enabled: boolean };
  csrf_token: string;
  name?: string;
  message?: string;
}

/** The name of an error's answer. */
const errorName = async (res: Response) => ((await res.json()) as { name: string }).name;

async function signIn(body: object, headers: Record<string, string> = {}) {
  const res = await fetch(`${p.url}/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const cookie = res.headers.get('set-cookie');
  return {
    status: res.status,
    body: (await res.json()) as SignInBody,
    cookie,
    token: cookie ? (/posthorn_session=([^;]+)/.exec(cookie)?.[1] ?? null) : null,
    headers: res.headers,
  };
}

const as = (token: string, csrf?: string) => ({ cookie: `posthorn_session=${token}`, ...(csrf ? { 'x-csrf-token': csrf } : {}) });

describe('sign-in and the session cookie', () => {
  test('the right password gives an HttpOnly SameSite=Lax cookie and the CSRF token; the session works on the REST API only with it', async () => {
    const s = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password });
    expect(s.status).toBe(200);
    expect(s.cookie).toContain('HttpOnly');
    expect(s.cookie).toMatch(/SameSite=Lax/i);
    expect(s.cookie).not.toContain('Secure'); // http public_url
    expect(s.body.user).toMatchObject({ email: p.creds.admin_email, role: 'owner', totp_enabled: false });
    const bare = await fetch(`${p.url}/domains`, { headers: as(s.token!) });
    expect(bare.status).toBe(401);
    expect(await errorName(bare)).toBe('missing_csrf_token');
    const wrong = await fetch(`${p.url}/domains`, {
      headers: as(
        s.token!,
        s.body.csrf_token.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A')),
      ),
    });
    expect(wrong.status).toBe(401);
    const ok = await fetch(`${p.url}/domains`, { headers: as(s.token!, s.body.csrf_token) });
    expect(ok.status).toBe(200);
    // Issue 34: what a session reads is never kept by a cache (shared or the browser's).
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect((await fetch(`${p.url}/auth/session`, { headers: as(s.token!) })).headers.get('cache-control')).toBe('no-store');
    // A CSRF token belongs to its session only.
    const other = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password });
    expect((await fetch(`${p.url}/domains`, { headers: as(other.token!, s.body.csrf_token) })).status).toBe(401);
    // Sign-out ends it.
    expect((await fetch(`${p.url}/auth/sign-out`, { method: 'POST', headers: as(s.token!, s.body.csrf_token) })).status).toBe(200);
    const after = await fetch(`${p.url}/domains`, { headers: as(s.token!, s.body.csrf_token) });
    expect(after.status).toBe(401);
    expect(await errorName(after)).toBe('session_expired');
  });

  test('a sign-in from another site is refused', async () => {
    const s = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password }, { origin: 'https://evil.test' });
    expect(s.status).toBe(403);
    expect(s.body.name).toBe('invalid_origin');
    expect(s.cookie).toBeNull();
  });

  test('idle and absolute expiry end a session', async () => {
    const s = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password });
    const { sessions } = p.svc.auth;
    expect(await sessions.resolve(s.token!)).not.toBeNull();
    expect(await sessions.resolve(s.token!, Date.now() + 61 * 60_000)).toBeNull(); // idle 1 h
    const t = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password });
    expect(await sessions.resolve(t.token!, Date.now() + 2 * 3_600_000 + 1000)).toBeNull(); // lifetime 2 h
  });

  test('a password change keeps this session and ends the others', async () => {
    const a = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password });
    const b = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password });
    const short = await fetch(`${p.url}/auth/password`, {
      method: 'POST',
      headers: { ...as(a.token!, a.body.csrf_token), 'content-type': 'application/json' },
      body: JSON.stringify({ current_password: p.creds.admin_password, new_password: 'short' }),
    });
    expect(short.status).toBe(422);
    const res = await fetch(`${p.url}/auth/password`, {
      method: 'POST',
      headers: { ...as(a.token!, a.body.csrf_token), 'content-type': 'application/json' },
      body: JSON.stringify({ current_password: p.creds.admin_password, new_password: 'a-brand-new-password' }),
    });
    expect(res.status).toBe(200);
    expect((await fetch(`${p.url}/domains`, { headers: as(a.token!, a.body.csrf_token) })).status).toBe(200);
    expect((await fetch(`${p.url}/domains`, { headers: as(b.token!, b.body.csrf_token) })).status).toBe(401);
    expect((await signIn({ email: p.creds.admin_email, password: 'a-brand-new-password' })).status).toBe(200);
    p.creds.admin_password = 'a-brand-new-password';
  });

  test('a member cannot manage the team; an owner can, and a full_access key too', async () => {
    const inv = await p.api('POST', '/team/invites', { body: { email: 'mia@dest.test' } });
    expect(inv.status).toBe(201);
    const token = inv.body.url.split('/').pop();
    const joined = await fetch(`${p.url}/auth/invites/${token}/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'mia-password-123' }),
    });
    expect(joined.status).toBe(201);
    const mia = await signIn({ email: 'mia@dest.test', password: 'mia-password-123' });
    expect(mia.body.user.role).toBe('member');
    const refused = await fetch(`${p.url}/team/invites`, {
      method: 'POST',
      headers: { ...as(mia.token!, mia.body.csrf_token), 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'x@dest.test' }),
    });
    expect(refused.status).toBe(403);
    expect(await errorName(refused)).toBe('restricted_role');
    const members = (await p.api('GET', '/team/members')).body.data as { id: string; email: string; role: string }[];
    expect(members.map((m) => m.email).sort()).toEqual([p.creds.admin_email, 'mia@dest.test'].sort());
    // The last owner stays.
    const owner = members.find((m) => m.role === 'owner')!;
    expect((await p.api('DELETE', `/team/members/${owner.id}`)).status).toBe(422);
    const miaId = members.find((m) => m.email === 'mia@dest.test')!.id;
    expect((await p.api('DELETE', `/team/members/${miaId}`)).status).toBe(200);
    expect((await fetch(`${p.url}/domains`, { headers: as(mia.token!, mia.body.csrf_token) })).status).toBe(401);
  });

  test('five failures lock the account and the address out, even for the right password', async () => {
    for (let i = 0; i < 4; i++) expect((await signIn({ email: p.creds.admin_email, password: 'wrong-password' })).status).toBe(401);
    const fifth = await signIn({ email: p.creds.admin_email, password: 'wrong-password' });
    expect(fifth.status).toBe(429);
    expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThan(0);
    const right = await signIn({ email: p.creds.admin_email, password: p.creds.admin_password });
    expect(right.status).toBe(429);
    expect(right.body.message).toContain('Try again in 1 minute');
  });
});

// Issue 34, finding 4 and "account lockout": the client address is the connection's unless it is a
// configured proxy (README "Security"), and an account's lockout does not shut out an address that
// signed in to it recently.
describe('the client address and the lockout', () => {
  /** A sign-in to `q` as seen through `X-Forwarded-For: forwarded`. */
  const signInTo = async (q: Running, body: object, forwarded: string) => {
    const res = await fetch(`${q.url}/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwarded },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as SignInBody & { id: string }, cookie: res.headers.get('set-cookie') };
  };

  test('without trusted proxies a forged X-Forwarded-For is ignored: failures from one connection lock it', async () => {
    const q = await startPosthorn();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await signInTo(q, { email: `nobody${i}@dest.test`, password: 'wrong-password' }, `203.0.113.${i}`)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 429, 429, 429, 429]);
    } finally {
      await q.stop();
    }
  });

  test('behind a trusted proxy: the right-most address it forwards; an address that signed in recently gets past the account lock', async () => {
    const q = await startPosthorn({ 'http.trusted_proxies': ['127.0.0.1', '::1'] });
    try {
      const owner = { email: q.creds.admin_email, password: q.creds.admin_password };
      const home = await signInTo(q, owner, 'forged-by-client, 198.51.100.10');
      expect(home.status).toBe(200);
      const token = /posthorn_session=([^;]+)/.exec(home.cookie!)![1]!;
      const sessions = await fetch(`${q.url}/auth/sessions`, { headers: as(token, home.body.csrf_token) });
      expect(((await sessions.json()) as { data: { ip: string }[] }).data.map((x) => x.ip)).toEqual(['198.51.100.10']);
      // Five wrong passwords from addresses all over lock the account...
      for (let i = 0; i < 5; i++) await signInTo(q, { ...owner, password: 'wrong-password' }, `203.0.113.${i}`);
      const stranger = await signInTo(q, owner, '203.0.113.99');
      expect([stranger.status, stranger.body.name]).toEqual([429, 'rate_limit_exceeded']);
      // ...but not for the owner at the address they signed in from.
      expect((await signInTo(q, owner, '198.51.100.10')).status).toBe(200);
      // That address is still limited on its own failures.
      for (let i = 0; i < 5; i++) await signInTo(q, { ...owner, password: 'wrong-password' }, '198.51.100.10');
      expect((await signInTo(q, owner, '198.51.100.10')).status).toBe(429);
    } finally {
      await q.stop();
    }
  });
});

describe('FailureLimiter', () => {
  test('locks after the threshold, longer after each further failure, capped; success clears', () => {
    const f = new FailureLimiter({ threshold: 3, window: 60_000, lockout: 1000, maxLockout: 4000 });
    const t0 = 1_000_000;
    expect(f.fail(['a'], t0)).toBe(0);
    expect(f.fail(['a'], t0)).toBe(0);
    expect(f.fail(['a'], t0)).toBe(1000);
    expect(f.fail(['a'], t0)).toBe(2000);
    expect(f.fail(['a'], t0)).toBe(4000);
    expect(f.fail(['a'], t0)).toBe(4000);
    expect(f.lockedFor(['b'], t0)).toBe(0);
    expect(f.lockedFor(['a', 'b'], t0 + 1000)).toBe(3000);
    f.succeed(['a']);
    expect(f.lockedFor(['a'], t0)).toBe(0);
  });

  test('failures older than the window are forgotten; the map stays bounded', () => {
    const f = new FailureLimiter({ threshold: 2, window: 1000, lockout: 1000, maxLockout: 1000, maxKeys: 100 });
    f.fail(['a'], 0);
    expect(f.fail(['a'], 5000)).toBe(0);
    for (let i = 0; i < 1000; i++) f.fail([`k${i}`], 0);
    expect((f as unknown as { entries: Map<string, unknown> }).entries.size).toBeLessThanOrEqual(100);
  });
});

// Issue 34, finding 5: a page in a loop must not be free; a session has a limit of its own.
describe('the session request limit', () => {
  test('over limits.session_requests_per_second a session answers 429; another session is not affected', async () => {
    const q = await startPosthorn({ 'limits.session_requests_per_second': 3 });
    try {
      const open = async () => {
        const res = await fetch(`${q.url}/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: q.creds.admin_email, password: q.creds.admin_password }),
        });
        const body = (await res.json()) as SignInBody;
        return as(/posthorn_session=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!, body.csrf_token);
      };
      const [a, b] = [await open(), await open()];
      const answers = await Promise.all(Array.from({ length: 12 }, () => fetch(`${q.url}/domains`, { headers: a })));
      const refused = answers.filter((r) => r.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      expect(((await refused[0]!.json()) as { name: string }).name).toBe('rate_limit_exceeded');
      expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await fetch(`${q.url}/domains`, { headers: b })).status).toBe(200);
    } finally {
      await q.stop();
    }
  });
});

// Issue 34, finding 7: the sign-in page shows what `?error=` says, so the callback names a known
// reason only, never the provider's words (nor an address).
describe('the OpenID Connect callback', () => {
  test('redirects to the sign-in page with a reason code, never the text of the provider or the failure', async () => {
    const q = await startPosthorn({ 'auth.oidc.issuer': 'http://127.0.0.1:9', 'auth.oidc.client_id': 'posthorn' });
    try {
      const callback = (query: string, cookie?: string) =>
        fetch(`${q.url}/auth/oidc/callback${query}`, { redirect: 'manual', headers: cookie ? { cookie: `posthorn_oidc=${cookie}` } : {} });
      const stale = await callback('?code=x&state=y');
      expect([stale.status, stale.headers.get('location')]).toEqual([302, '/dashboard/sign-in?error=oidc_expired']);
      // A flow this browser started (its sealed cookie), which the provider answers with words of its choosing.
      const signer = (q.svc.auth.oidc as unknown as { signer: { seal(v: object): string } }).signer;
      const flow = signer.seal({ k: 'oidc', v: 'verifier', s: 'state', n: 'nonce', e: Date.now() + 60_000 });
      const refused = await callback(
        `?error=access_denied&error_description=${encodeURIComponent('Your account is locked. Call +1 555 0100 at evil.test')}`,
        flow,
      );
      expect(refused.headers.get('location')).toBe('/dashboard/sign-in?error=oidc_refused');
    } finally {
      await q.stop();
    }
  });
});

describe('auth configuration', () => {
  test('an OIDC issuer must be https (http only on loopback) and needs a client id', () => {
    expect(() => loadConfig({ env: {}, overrides: { 'auth.oidc.issuer': 'http://idp.example.com' } })).toThrow('auth.oidc.issuer');
    expect(() => loadConfig({ env: {}, overrides: { 'auth.oidc.issuer': 'https://idp.example.com' } })).toThrow('auth.oidc.client_id');
    const c = loadConfig({
      env: { POSTHORN_AUTH_OIDC_ALLOWED_DOMAINS: 'Example.com, @acme.test' },
      overrides: { 'auth.oidc.issuer': 'https://idp.example.com', 'auth.oidc.client_id': 'x' },
    });
    expect(c.auth.oidc.allowed_domains).toEqual(['example.com', 'acme.test']);
    expect(() => loadConfig({ env: { POSTHORN_AUTH_OIDC_ALLOWED_DOMAINS: 'not a domain' } })).toThrow('auth.oidc.allowed_domains');
  });
});
