// Dashboard sessions (docs/api.md §19): a random token in an HttpOnly cookie, stored only as its
// SHA-256, ended by an idle timeout, an absolute lifetime, sign-out or "sign out everywhere".
// A cookie alone authenticates nothing: every request must also carry the session's CSRF token
// in a header (docs/api.md §19.2), which a cross-site form or image can never send. The CSRF token
// is an HMAC of the session token under the install's `sessions` secret, so nothing else is stored.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SessionRec, Store, UserRec } from '../store';
import { newId, nowIso, sha256hex } from '../ids';
import { inBackground } from '../store/guarded';

export const SESSION_COOKIE = 'posthorn_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface SessionMeta {
  userAgent: string | null;
  ip: string | null;
  method: SessionRec['method'];
}

export interface SignedIn {
  session: SessionRec;
  user: UserRec;
}

/** A new session's secrets: the cookie value and the CSRF token the page sends back. */
export interface NewSession extends SignedIn {
  token: string;
  csrf: string;
}

const TOUCH_EVERY_MS = 60_000;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export class Sessions {
  private readonly secret: Buffer;

  constructor(
    private readonly store: Store,
    private readonly opts: { idleMs: number; lifetimeMs: number },
  ) {
    this.secret = store.secret('sessions');
  }

  get lifetimeMs(): number {
    return this.opts.lifetimeMs;
  }

  async create(user: UserRec, meta: SessionMeta): Promise<NewSession> {
    const token = randomBytes(32).toString('base64url');
    const now = Date.now();
    const session: SessionRec = {
      id: newId(),
      team_id: user.team_id,
      created_at: new Date(now).toISOString(),
      user_id: user.id,
      token_hash: sha256hex(token),
      expires_at: now + this.opts.lifetimeMs,
      last_seen_at: new Date(now).toISOString(),
      user_agent: meta.userAgent?.slice(0, 300) ?? null,
      ip: meta.ip,
      method: meta.method,
    };
    await this.store.write(async (tx) => tx.sessions.put(session));
    return { session, user, token, csrf: this.csrfFor(token) };
  }

  csrfFor(token: string): string {
    return createHmac('sha256', this.secret).update(`csrf ${token}`).digest('base64url');
  }

  /** The live session a cookie token stands for (no CSRF check: for reading who is signed in). */
  async resolve(token: string | null | undefined, now = Date.now()): Promise<SignedIn | null> {
    if (!token || !TOKEN_RE.test(token)) return null;
    const session = await this.store.sessions.find('token', sha256hex(token));
    if (!session) return null;
    if (session.expires_at <= now || now - Date.parse(session.last_seen_at) > this.opts.idleMs) {
      await this.store.write(async (tx) => tx.sessions.remove(session.team_id, session.id));
      return null;
    }
    const user = await this.store.users.get(session.team_id, session.user_id);
    if (!user) return null;
    if (now - Date.parse(session.last_seen_at) > TOUCH_EVERY_MS) this.touch(session);
    return { session, user };
  }

  /** A session that may act: the cookie's and the header's tokens must belong together. */
  async authenticate(token: string | null | undefined, csrf: string | null | undefined): Promise<SignedIn | null> {
    if (!token || !csrf) return null;
    const expected = Buffer.from(this.csrfFor(token));
    const given = Buffer.from(csrf);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return this.resolve(token);
  }

  /** Whether `session` is still signed in (not ended, not expired): the live stream asks it now and then. */
  async stillLive(session: Pick<SessionRec, 'team_id' | 'id'>, now = Date.now()): Promise<boolean> {
    const s = await this.store.sessions.get(session.team_id, session.id);
    return !!s && s.expires_at > now && now - Date.parse(s.last_seen_at) <= this.opts.idleMs;
  }

  /** The user's live sessions, newest first. */
  async list(user: UserRec, now = Date.now()): Promise<SessionRec[]> {
    const all = await this.store.sessions.findAll('user', user.id, user.team_id);
    return all.filter((s) => s.expires_at > now && now - Date.parse(s.last_seen_at) <= this.opts.idleMs).reverse();
  }

  /** End one of the user's sessions; false when it is not theirs or gone already. */
  async revoke(user: UserRec, id: string): Promise<boolean> {
    return this.store.write(async (tx) => {
      const s = await tx.sessions.get(user.team_id, id);
      if (!s || s.user_id !== user.id) return false;
      tx.sessions.remove(s.team_id, s.id);
      return true;
    });
  }

  /** End every session of a user but `keep` (sign out everywhere else, a password change). */
  async revokeAll(user: Pick<UserRec, 'id' | 'team_id'>, keep?: string): Promise<number> {
    return this.store.write(async (tx) => {
      const all = await tx.sessions.findAll('user', user.id, user.team_id);
      let n = 0;
      for (const s of all)
        if (s.id !== keep) {
          tx.sessions.remove(s.team_id, s.id);
          n++;
        }
      return n;
    });
  }

  /** Note activity for the idle timeout, at most once a minute, without holding up the request. */
  private touch(session: SessionRec): void {
    inBackground(
      'session last_seen_at',
      this.store.write(async (tx) => {
        const cur = await tx.sessions.get(session.team_id, session.id);
        if (cur) tx.sessions.put({ ...cur, last_seen_at: nowIso() });
      }),
    );
  }
}
