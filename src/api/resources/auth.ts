// Dashboard sign-in (docs/api.md §19): password and TOTP, OpenID Connect, invitations, the
// signed-in user's sessions and second factor. These routes sit outside API-key authentication:
// the public ones create a session, the others (`access: 'session'`) take the session cookie with
// its CSRF header.
import type { ApiContext } from '../app';
import { clientIp } from '../platform/context';
import { clearCookie, overHttps, readCookie, sessionToken, setCookie } from '../platform/session';
import { ApiError, errors } from '../../errors';
import { SESSION_COOKIE, type NewSession, type SessionMeta, type SignedIn } from '../../accounts/sessions';
import { OIDC_COOKIE, OidcFailure } from '../../accounts/oidc';
import { memberView } from '../../accounts/members';
import type { SessionRec, UserRec } from '../../store';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, TokenParams, UuidParams } from '../../schemas/common';
import {
  AcceptInviteRequest,
  EmailChanged,
  EmailChangeRequest,
  EmailChangeRequested,
  InviteByToken,
  PasswordResetConfirm,
  PasswordResetRequest,
  PasswordResetRequested,
  PasswordChanged,
  PasswordRequest,
  Providers,
  Session,
  type SessionItem,
  SessionList,
  SessionsEnded,
  SignInRequest,
  TotpConfirmRequest,
  TotpDisabled,
  TotpDisableRequest,
  TotpEnabled,
  TotpEnrolment,
} from '../../schemas/accounts';

export const authResource = resource('Dashboard sign-in', (svc: ApiContext) => {
  const { auth, store, config } = svc;
  const { audit } = auth;

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

  async function sessionView(s: SignedIn, csrf: string): Promise<Session> {
    const team = await store.teams.get(s.user.team_id, s.user.team_id);
    return {
      object: 'session',
      id: s.session.id,
      user: memberView(s.user),
      team: { id: s.user.team_id, name: team?.name ?? '', require_totp: !!team?.require_totp, require_oidc: !!team?.require_oidc },
      csrf_token: csrf,
      expires_at: new Date(s.session.expires_at).toISOString(),
    };
  }

  /** A sign-in in the team's audit log (docs/api.md §19.11): made, or refused with the reason. */
  const auditSignIn = (request: Request, user: UserRec, method: SessionMeta['method'], refused?: ApiError) =>
    audit.record({
      team: user.team_id,
      action: refused ? 'auth.sign_in_failed' : method === 'invite' ? 'member.joined' : 'auth.signed_in',
      actor: { user },
      ip: clientIp(request) || null,
      targetId: user.id,
      details: refused ? { method, reason: refused.errorName } : { method },
    });

  function withCookie(request: Request, set: { headers: Record<string, string | number> }, s: NewSession) {
    set.headers['set-cookie'] = setCookie(SESSION_COOKIE, s.token, { maxAgeMs: auth.sessions.lifetimeMs, secure: overHttps(request, config.public_url) });
  }

  const sessionItem =
    (current: string) =>
    (s: SessionRec): SessionItem => ({
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

  return [
    route({
      method: 'GET',
      path: '/auth/providers',
      summary: 'How one can sign in to the dashboard',
      access: 'public',
      body: 'none',
      response: Providers,
      handler: () => ({
        object: 'providers' as const,
        password: true as const,
        oidc: auth.oidc.enabled ? { name: auth.oidc.name, start_url: '/auth/oidc/start' } : null,
      }),
    }),
    route({
      method: 'GET',
      path: '/auth/session',
      summary: 'The signed-in user, team and CSRF token',
      access: 'public',
      body: 'none',
      response: Session,
      async handler({ request }) {
        const token = sessionToken(request);
        const s = await auth.sessions.resolve(token);
        if (!s || !token) throw errors.notSignedIn();
        return sessionView(s, auth.sessions.csrfFor(token));
      },
    }),
    route({
      method: 'POST',
      path: '/auth/sign-in',
      summary: 'Sign in with email, password and (when enabled) a TOTP or recovery code',
      access: 'public',
      body: SignInRequest,
      response: Session,
      async handler({ request, body, set }) {
        sameOrigin(request);
        let s: NewSession;
        try {
          s = await auth.signIn.withPassword(body, meta(request, 'password'));
        } catch (e) {
          // Failures are recorded in the team of the account they were for; an address with no account has no team.
          const user = e instanceof ApiError ? await store.users.find('email', body.email.trim().toLowerCase()) : undefined;
          if (user) await auditSignIn(request, user, 'password', e as ApiError);
          throw e;
        }
        await auditSignIn(request, s.user, 'password');
        withCookie(request, set, s);
        return sessionView(s, s.csrf);
      },
    }),
    route({
      method: 'POST',
      path: '/auth/sign-out',
      summary: 'Sign out this browser',
      access: 'session',
      body: IgnoredBody,
      response: Deleted('session'),
      async handler({ request, caller, set }) {
        await auth.sessions.revoke(caller.user, caller.session.id);
        set.headers['set-cookie'] = clearCookie(SESSION_COOKIE, overHttps(request, config.public_url));
        return { object: 'session' as const, id: caller.session.id, deleted: true as const };
      },
    }),
    route({
      method: 'GET',
      path: '/auth/oidc/start',
      summary: 'Start OpenID Connect sign-in (redirects to the provider)',
      access: 'public',
      body: 'none',
      response: { raw: 'redirect', description: 'To the provider' },
      async handler({ request }) {
        const { url, cookie } = await auth.oidc.start();
        const headers = new Headers({ location: url, 'cache-control': 'no-store' });
        headers.append(
          'set-cookie',
          setCookie(OIDC_COOKIE, cookie, { maxAgeMs: 10 * 60_000, secure: overHttps(request, config.public_url), path: '/auth/oidc' }),
        );
        return new Response(null, { status: 302, headers });
      },
    }),
    route({
      method: 'GET',
      path: '/auth/oidc/callback',
      summary: 'The provider’s redirect back (OpenID Connect)',
      access: 'public',
      body: 'none',
      response: { raw: 'redirect', description: 'To the dashboard, signed in, or to the sign-in page with the reason' },
      async handler({ request }) {
        const secure = overHttps(request, config.public_url);
        const headers = new Headers({ 'cache-control': 'no-store' });
        headers.append('set-cookie', clearCookie(OIDC_COOKIE, secure, '/auth/oidc'));
        try {
          const user = await auth.oidc.finish(new URL(request.url), readCookie(request, OIDC_COOKIE));
          // The provider vouches for the person, its own second factor included (docs/api.md §19.3).
          const s = await auth.sessions.create(user, meta(request, 'oidc'));
          await auditSignIn(request, user, 'oidc');
          headers.append('set-cookie', setCookie(SESSION_COOKIE, s.token, { maxAgeMs: auth.sessions.lifetimeMs, secure }));
          headers.set('location', '/dashboard');
        } catch (e) {
          // A reason code only: the sign-in page maps it to its own words (accounts/sign-in-failures.ts).
          if (!(e instanceof OidcFailure)) throw e;
          headers.set('location', `/dashboard/sign-in?error=${e.reason}`);
        }
        return new Response(null, { status: 302, headers });
      },
    }),
    route({
      method: 'GET',
      path: '/auth/invites/:token',
      summary: 'An invitation, by its link token',
      access: 'public',
      params: TokenParams,
      body: 'none',
      response: InviteByToken,
      async handler({ params }) {
        const { invite, team } = await auth.members.lookup(params.token);
        return { object: 'invite' as const, email: invite.email, role: invite.role, team, expires_at: new Date(invite.expires_at).toISOString() };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/invites/:token/accept',
      summary: 'Join a team: choose a password and sign in',
      access: 'public',
      params: TokenParams,
      body: AcceptInviteRequest,
      status: 201,
      response: Session,
      async handler({ request, params, body, set }) {
        sameOrigin(request);
        const user = await auth.members.accept(params.token, body.password);
        const s = await auth.sessions.create(user, meta(request, 'invite'));
        await auditSignIn(request, user, 'invite');
        withCookie(request, set, s);
        return sessionView(s, s.csrf);
      },
    }),
    route({
      method: 'GET',
      path: '/auth/sessions',
      summary: 'The signed-in user’s sessions',
      access: 'session',
      body: 'none',
      response: SessionList,
      handler: async ({ caller }) => ({
        object: 'list' as const,
        has_more: false as const,
        data: (await auth.sessions.list(caller.user)).map(sessionItem(caller.session.id)),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/auth/sessions/:id',
      summary: 'End one session',
      access: 'session',
      params: UuidParams('id'),
      body: IgnoredBody,
      response: Deleted('session'),
      async handler({ caller, params }) {
        if (!(await auth.sessions.revoke(caller.user, params.id))) throw errors.notFound('Session');
        return { object: 'session' as const, id: params.id, deleted: true as const };
      },
    }),
    route({
      method: 'DELETE',
      path: '/auth/sessions',
      summary: 'Sign out everywhere (every session of the user, this one included)',
      access: 'session',
      body: IgnoredBody,
      response: SessionsEnded,
      async handler({ request, caller, set }) {
        const ended = await auth.sessions.revokeAll(caller.user);
        set.headers['set-cookie'] = clearCookie(SESSION_COOKIE, overHttps(request, config.public_url));
        return { object: 'list' as const, deleted: ended };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/password',
      summary: 'Change the password (ends the user’s other sessions)',
      access: 'session',
      audit: 'auth.password_changed',
      body: PasswordRequest,
      response: PasswordChanged,
      async handler({ request, caller, body }) {
        await auth.signIn.changePassword(caller.user, body.current_password, body.new_password, clientIp(request) || null, caller.session.id);
        return { object: 'user' as const, id: caller.user.id, password_changed: true as const };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/password-reset',
      summary: 'Forgot the password: mail a single-use link to choose a new one (the same answer for any address) (Posthorn)',
      access: 'public',
      body: PasswordResetRequest,
      response: PasswordResetRequested,
      async handler({ request, body }) {
        sameOrigin(request);
        const ip = clientIp(request) || null;
        const user = await auth.accountMail.requestReset(body.email, ip);
        if (user) await audit.record({ team: user.team_id, action: 'auth.password_reset_requested', actor: { user }, ip, targetId: user.id });
        return { object: 'password_reset' as const, requested: true as const };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/password-reset/:token',
      summary: 'Choose a new password with a reset link (ends every session of the user) (Posthorn)',
      access: 'public',
      params: TokenParams,
      body: PasswordResetConfirm,
      response: PasswordChanged,
      async handler({ request, params, body }) {
        sameOrigin(request);
        const user = await auth.accountMail.resetPassword(params.token, body.password);
        await audit.record({ team: user.team_id, action: 'auth.password_reset', actor: { user }, ip: clientIp(request) || null, targetId: user.id });
        return { object: 'user' as const, id: user.id, password_changed: true as const };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/email',
      summary: 'Change the signed-in user’s email: a confirmation link is mailed to the new address (Posthorn)',
      access: 'session',
      audit: 'auth.email_change_requested',
      body: EmailChangeRequest,
      status: 202,
      response: EmailChangeRequested,
      async handler({ request, caller, body }) {
        const rec = await auth.accountMail.requestEmailChange(caller.user, body.email, body.password, clientIp(request) || null);
        return { object: 'email_change' as const, email: rec.email!, expires_at: new Date(rec.expires_at).toISOString() };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/email/confirm/:token',
      summary: 'Confirm a new email address with the mailed link (Posthorn)',
      access: 'public',
      params: TokenParams,
      body: IgnoredBody,
      response: EmailChanged,
      async handler({ request, params }) {
        sameOrigin(request);
        const user = await auth.accountMail.confirmEmailChange(params.token);
        await audit.record({
          team: user.team_id,
          action: 'auth.email_changed',
          actor: { user },
          ip: clientIp(request) || null,
          targetId: user.id,
          details: { email: user.email },
        });
        return { object: 'user' as const, id: user.id, email: user.email };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/totp',
      summary: 'Start TOTP enrolment: a new key, its URI and QR code',
      access: 'session',
      body: IgnoredBody,
      status: 201,
      response: TotpEnrolment,
      handler: async ({ caller }) => ({ object: 'totp_enrolment' as const, ...(await auth.signIn.beginTotp(caller.user)) }),
    }),
    route({
      method: 'POST',
      path: '/auth/totp/confirm',
      summary: 'Confirm TOTP enrolment with a first code; returns the recovery codes once',
      access: 'session',
      audit: 'auth.totp_enabled',
      body: TotpConfirmRequest,
      response: TotpEnabled,
      handler: async ({ caller, body }) => ({
        object: 'totp' as const,
        enabled: true as const,
        recovery_codes: await auth.signIn.confirmTotp(caller.user, body.code),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/auth/totp',
      summary: 'Turn TOTP off (needs the password)',
      access: 'session',
      audit: 'auth.totp_disabled',
      body: TotpDisableRequest,
      response: TotpDisabled,
      async handler({ request, caller, body }) {
        await auth.signIn.disableTotp(caller.user, body.password, clientIp(request) || null);
        return { object: 'totp' as const, enabled: false as const };
      },
    }),
  ];
});
