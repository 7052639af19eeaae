// Dashboard sign-in (docs/api.md §19): password and TOTP, OpenID Connect, invitations, the
// signed-in user's sessions and second factor. These routes sit outside API-key authentication:
// the public ones create a session, the others take the session cookie with its CSRF header.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import { clientIp } from '../platform/context';
import { clearCookie, overHttps, readCookie, requireSession, sessionToken, setCookie } from '../platform/session';
import { pathId } from '../platform/params';
import { ApiError, errors } from '../../errors';
import { SESSION_COOKIE, type NewSession, type SessionMeta, type SignedIn } from '../../accounts/sessions';
import { OIDC_COOKIE } from '../../accounts/oidc';
import { memberView } from '../../accounts/members';
import type { SessionRec } from '../../store';

const tags = ['Dashboard sign-in'];

export function authRoutes(app: App, svc: ApiContext) {
  const { auth, store, config } = svc;

  const meta = (request: Request, method: SessionMeta['method']): SessionMeta => ({
    userAgent: request.headers.get('user-agent'),
    ip: clientIp(request) || null,
    method,
  });

  /**
   * Requests that set a session must come from a page of this server: browsers send `Origin` on
   * every POST, so a cross-site form cannot sign a victim in to someone else's account.
   */
  const sameOrigin = (request: Request) => {
    const origin = request.headers.get('origin');
    if (!origin) return;
    const own = new URL(request.url).origin;
    if (origin !== own && origin !== new URL(config.public_url).origin)
      throw new ApiError(403, 'invalid_origin', 'This request must come from the dashboard of this server.');
  };

  async function sessionView(s: SignedIn, csrf: string) {
    const team = await store.teams.get(s.user.team_id, s.user.team_id);
    return {
      object: 'session',
      id: s.session.id,
      user: memberView(s.user),
      team: { id: s.user.team_id, name: team?.name ?? '' },
      csrf_token: csrf,
      expires_at: new Date(s.session.expires_at).toISOString(),
    };
  }

  function withCookie(request: Request, set: { headers: Record<string, string | number> }, s: NewSession) {
    set.headers['set-cookie'] = setCookie(SESSION_COOKIE, s.token, { maxAgeMs: auth.sessions.lifetimeMs, secure: overHttps(request, config.public_url) });
  }

  /** The session of a request that changes something: cookie and CSRF header together. */
  const signedIn = (request: Request) => requireSession(auth.sessions, request);

  const sessionItem = (current: string) => (s: SessionRec) => ({
    object: 'session',
    id: s.id,
    created_at: s.created_at,
    last_seen_at: s.last_seen_at,
    expires_at: new Date(s.expires_at).toISOString(),
    user_agent: s.user_agent,
    ip: s.ip,
    method: s.method,
    current: s.id === current,
  });

  app.get(
    '/auth/providers',
    () => ({ object: 'providers', password: true, oidc: auth.oidc.enabled ? { name: auth.oidc.name, start_url: '/auth/oidc/start' } : null }),
    { detail: { summary: 'How one can sign in to the dashboard', tags } },
  );

  app.get(
    '/auth/session',
    async ({ request }) => {
      const token = sessionToken(request);
      const s = await auth.sessions.resolve(token);
      if (!s || !token) throw errors.notSignedIn();
      return sessionView(s, auth.sessions.csrfFor(token));
    },
    { detail: { summary: 'The signed-in user, team and CSRF token', tags } },
  );

  app.post(
    '/auth/sign-in',
    async ({ request, body, set }) => {
      sameOrigin(request);
      const s = await auth.signIn.withPassword(body, meta(request, 'password'));
      withCookie(request, set, s);
      return sessionView(s, s.csrf);
    },
    {
      body: t.Object({
        email: t.String({ minLength: 1, maxLength: 254, error: 'The `email` field must be an email address.' }),
        password: t.String({ minLength: 1, maxLength: 200, error: 'The `password` field must be a string.' }),
        code: t.Optional(t.String({ maxLength: 40, error: 'The `code` field must be a string.' })),
      }),
      detail: { summary: 'Sign in with email, password and (when enabled) a TOTP or recovery code', tags },
    },
  );

  app.post(
    '/auth/sign-out',
    async ({ request, set }) => {
      const s = await signedIn(request);
      await auth.sessions.revoke(s.user, s.session.id);
      set.headers['set-cookie'] = clearCookie(SESSION_COOKIE, overHttps(request, config.public_url));
      return { object: 'session', id: s.session.id, deleted: true };
    },
    { detail: { summary: 'Sign out this browser', tags } },
  );

  app.get(
    '/auth/oidc/start',
    async ({ request }) => {
      const { url, cookie } = await auth.oidc.start();
      const headers = new Headers({ location: url, 'cache-control': 'no-store' });
      headers.append(
        'set-cookie',
        setCookie(OIDC_COOKIE, cookie, { maxAgeMs: 10 * 60_000, secure: overHttps(request, config.public_url), path: '/auth/oidc' }),
      );
      return new Response(null, { status: 302, headers });
    },
    { detail: { summary: 'Start OpenID Connect sign-in (redirects to the provider)', tags } },
  );

  app.get(
    '/auth/oidc/callback',
    async ({ request }) => {
      const secure = overHttps(request, config.public_url);
      const headers = new Headers({ 'cache-control': 'no-store' });
      headers.append('set-cookie', clearCookie(OIDC_COOKIE, secure, '/auth/oidc'));
      try {
        const user = await auth.oidc.finish(new URL(request.url), readCookie(request, OIDC_COOKIE));
        // The provider vouches for the person, its own second factor included (docs/api.md §19.3).
        const s = await auth.sessions.create(user, meta(request, 'oidc'));
        headers.append('set-cookie', setCookie(SESSION_COOKIE, s.token, { maxAgeMs: auth.sessions.lifetimeMs, secure }));
        headers.set('location', '/dashboard');
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        headers.set('location', `/dashboard/sign-in?error=${encodeURIComponent(e.message)}`);
      }
      return new Response(null, { status: 302, headers });
    },
    { detail: { summary: 'The provider’s redirect back (OpenID Connect)', tags } },
  );

  app.get(
    '/auth/invites/:token',
    async ({ params }) => {
      const { invite, team } = await auth.members.lookup(params.token);
      return { object: 'invite', email: invite.email, role: invite.role, team, expires_at: new Date(invite.expires_at).toISOString() };
    },
    { detail: { summary: 'An invitation, by its link token', tags } },
  );

  app.post(
    '/auth/invites/:token/accept',
    async ({ request, params, body, set }) => {
      sameOrigin(request);
      const user = await auth.members.accept(params.token, body.password);
      const s = await auth.sessions.create(user, meta(request, 'invite'));
      withCookie(request, set, s);
      set.status = 201;
      return sessionView(s, s.csrf);
    },
    { body: t.Object({ password: t.Optional(t.Unknown()) }), detail: { summary: 'Join a team: choose a password and sign in', tags } },
  );

  app.get(
    '/auth/sessions',
    async ({ request }) => {
      const s = await signedIn(request);
      return { object: 'list', has_more: false, data: (await auth.sessions.list(s.user)).map(sessionItem(s.session.id)) };
    },
    { detail: { summary: 'The signed-in user’s sessions', tags } },
  );

  app.delete(
    '/auth/sessions/:id',
    async ({ request, params }) => {
      const s = await signedIn(request);
      const id = pathId(params.id);
      if (!(await auth.sessions.revoke(s.user, id))) throw errors.notFound('Session');
      return { object: 'session', id, deleted: true };
    },
    { detail: { summary: 'End one session', tags } },
  );

  app.delete(
    '/auth/sessions',
    async ({ request, set }) => {
      const s = await signedIn(request);
      const ended = await auth.sessions.revokeAll(s.user);
      set.headers['set-cookie'] = clearCookie(SESSION_COOKIE, overHttps(request, config.public_url));
      return { object: 'list', deleted: ended };
    },
    { detail: { summary: 'Sign out everywhere (every session of the user, this one included)', tags } },
  );

  app.post(
    '/auth/password',
    async ({ request, body }) => {
      const s = await signedIn(request);
      await auth.signIn.changePassword(s.user, body.current_password, body.new_password, clientIp(request) || null, s.session.id);
      return { object: 'user', id: s.user.id, password_changed: true };
    },
    {
      body: t.Object({
        current_password: t.String({ maxLength: 200, error: 'The `current_password` field must be a string.' }),
        new_password: t.String({ maxLength: 200, error: 'The `new_password` field must be a string.' }),
      }),
      detail: { summary: 'Change the password (ends the user’s other sessions)', tags },
    },
  );

  app.post(
    '/auth/totp',
    async ({ request, set }) => {
      const s = await signedIn(request);
      set.status = 201;
      return { object: 'totp_enrolment', ...(await auth.signIn.beginTotp(s.user)) };
    },
    { detail: { summary: 'Start TOTP enrolment: a new key, its URI and QR code', tags } },
  );

  app.post(
    '/auth/totp/confirm',
    async ({ request, body }) => {
      const s = await signedIn(request);
      return { object: 'totp', enabled: true, recovery_codes: await auth.signIn.confirmTotp(s.user, body.code) };
    },
    {
      body: t.Object({ code: t.String({ maxLength: 12, error: 'The `code` field must be the 6-digit code.' }) }),
      detail: { summary: 'Confirm TOTP enrolment with a first code; returns the recovery codes once', tags },
    },
  );

  app.delete(
    '/auth/totp',
    async ({ request, body }) => {
      const s = await signedIn(request);
      await auth.signIn.disableTotp(s.user, body.password, clientIp(request) || null);
      return { object: 'totp', enabled: false };
    },
    {
      body: t.Object({ password: t.String({ maxLength: 200, error: 'The `password` field must be a string.' }) }),
      detail: { summary: 'Turn TOTP off (needs the password)', tags },
    },
  );
}
