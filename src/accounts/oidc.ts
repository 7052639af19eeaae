// Third-party sign-in through any OpenID Connect provider (OpenID Connect Core 1.0 §3.1, the
// authorization code flow, with PKCE, RFC 7636): `openid-client` does discovery, the token
// exchange and the ID token checks (issuer, audience, signature, nonce). The state, nonce and code
// verifier travel in a short-lived cookie sealed with the install's `sessions` secret, so a
// callback can only finish the flow its own browser started. The provider's verified email must
// belong to a team member and, when `auth.oidc.allowed_domains` is set, to one of those domains.
import * as client from 'openid-client';
import type { Config } from '../config';
import type { Store, UserRec } from '../store';
import { Signer } from '../links/signer';
import { ApiError } from '../errors';
import { log } from '../log';
import { SIGN_IN_FAILURES, type SignInFailure } from './sign-in-failures';

export const OIDC_COOKIE = 'posthorn_oidc';
export const CALLBACK_PATH = '/auth/oidc/callback';
const FLOW_MS = 10 * 60_000;

/** A failed OpenID Connect sign-in: 403 with the reason's fixed message; `reason` is what the callback's redirect names. */
export class OidcFailure extends ApiError {
  constructor(readonly reason: SignInFailure) {
    super(403, 'oidc_sign_in_failed', SIGN_IN_FAILURES[reason]);
  }
}

const oidcError = (reason: SignInFailure) => new OidcFailure(reason);

export class OidcSignIn {
  private discovered?: Promise<client.Configuration>;
  private readonly signer: Signer;

  constructor(
    private readonly cfg: Config['auth']['oidc'],
    private readonly publicUrl: string,
    private readonly store: Store,
  ) {
    this.signer = new Signer(store.secret('sessions'));
  }

  get enabled(): boolean {
    return !!this.cfg.issuer && !!this.cfg.client_id;
  }

  /** What the sign-in button says: the issuer's host name. */
  get name(): string | null {
    return this.cfg.issuer ? new URL(this.cfg.issuer).hostname : null;
  }

  get redirectUri(): string {
    return `${this.publicUrl}${CALLBACK_PATH}`;
  }

  /** The provider's metadata, fetched once; a failed fetch is tried again next time. */
  private configuration(): Promise<client.Configuration> {
    if (!this.discovered) {
      const issuer = new URL(this.cfg.issuer!);
      // Plain http is allowed by the config check only on loopback (a test provider).
      const insecure = issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;
      this.discovered = client.discovery(issuer, this.cfg.client_id!, this.cfg.client_secret ?? undefined, undefined, insecure);
      this.discovered.catch((e) => {
        this.discovered = undefined;
        log.warn('auth.oidc_discovery_failed', { issuer: this.cfg.issuer, error: String(e) });
      });
    }
    return this.discovered;
  }

  /** Where to send the browser, and the sealed flow state for its cookie. */
  async start(): Promise<{ url: string; cookie: string }> {
    if (!this.enabled) throw oidcError('oidc_not_configured');
    let config: client.Configuration;
    try {
      config = await this.configuration();
    } catch {
      throw oidcError('oidc_unreachable');
    }
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, cookie: this.signer.seal({ k: 'oidc', v: verifier, s: state, n: nonce, e: Date.now() + FLOW_MS }) };
  }

  /** Finish the flow of `cookie` with the provider's redirect to `callback`: the member who signed in. */
  async finish(callback: URL, cookie: string | null): Promise<UserRec> {
    const flow = cookie ? this.signer.open(cookie) : null;
    if (flow?.k !== 'oidc' || typeof flow.e !== 'number' || flow.e < Date.now()) throw oidcError('oidc_expired');
    const providerError = callback.searchParams.get('error');
    if (providerError) {
      // The provider's words go to the log only: the sign-in page shows fixed messages.
      log.warn('auth.oidc_refused', { error: providerError.slice(0, 200), description: callback.searchParams.get('error_description')?.slice(0, 500) ?? null });
      throw oidcError('oidc_refused');
    }
    let config: client.Configuration;
    try {
      config = await this.configuration();
    } catch {
      throw oidcError('oidc_unreachable');
    }
    // The URL the provider redirected to, as registered (a proxy may have rewritten the host).
    const current = new URL(this.redirectUri);
    current.search = callback.search;
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: String(flow.v),
        expectedState: String(flow.s),
        expectedNonce: String(flow.n),
        idTokenExpected: true,
      });
      claims = { ...(tokens.claims() ?? {}) };
      if (typeof claims.email !== 'string') claims = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))) };
    } catch (e) {
      log.warn('auth.oidc_failed', { error: String(e) });
      throw oidcError('oidc_unverified');
    }
    const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : null;
    if (!email || claims.email_verified !== true) throw oidcError('oidc_no_verified_email');
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (this.cfg.allowed_domains.length && !this.cfg.allowed_domains.includes(domain)) {
      log.warn('auth.oidc_domain_not_allowed', { email });
      throw oidcError('oidc_domain_not_allowed');
    }
    const user = await this.store.users.find('email', email);
    if (!user) {
      log.warn('auth.oidc_not_a_member', { email });
      throw oidcError('oidc_not_a_member');
    }
    return user;
  }
}
