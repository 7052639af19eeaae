// Account changes confirmed by mail (docs/api.md §19.16): a forgotten password reset through a
// link mailed to the account's address, and a new address confirmed through a link mailed to it.
// Each link is a single-use token (only its SHA-256 is stored, accountTokens) that expires: a reset
// after an hour, an address change after a day. Asking for a reset answers the same whether an
// account has the address or not (no account enumeration, OWASP ASVS 4.0 §2.5.x), and is limited
// per address and per client address whether or not the account exists.
import { randomBytes } from 'node:crypto';
import type { AccountTokenRec, Store, Tx, UserRec } from '../store';
import { ApiError, errors } from '../errors';
import { newId, nowIso, sha256hex } from '../ids';
import { parseEmail } from '../mail/address';
import { log } from '../log';
import { FailureLimiter, clientKey } from '../limits/failures';
import { checkPassword, type SignIn } from './signin';
import type { Sessions } from './sessions';
import { emailChangeMessage, passwordResetMessage, type SystemMail } from './system-mail';

export const RESET_MINUTES = 60;
export const EMAIL_CHANGE_HOURS = 24;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** Reset requests per address: 5 an hour, then refused for up to an hour; per client address 20 (an office behind one address). */
const PER_ADDRESS = { threshold: 5, window: 3_600_000, lockout: 15 * 60_000, maxLockout: 3_600_000 };
const PER_CLIENT = { ...PER_ADDRESS, threshold: 20 };

function checkEmail(text: string): string {
  if (!text.trim()) throw errors.missingField('email');
  const addr = parseEmail(text.trim());
  if (!addr) throw errors.invalidField('email', 'give a plain address such as ana@example.com.');
  return addr.address.toLowerCase();
}

export class AccountMail {
  private readonly perAddress = new FailureLimiter(PER_ADDRESS);
  private readonly perClient = new FailureLimiter(PER_CLIENT);

  constructor(
    private readonly store: Store,
    private readonly mail: SystemMail,
    private readonly publicUrl: string,
    private readonly sessions: Sessions,
    private readonly signIn: SignIn,
  ) {}

  /** A new token of `kind` for `user`, replacing the user's earlier ones of that kind. */
  private async issue(user: UserRec, kind: AccountTokenRec['kind'], ttlMs: number, email?: string): Promise<{ token: string; rec: AccountTokenRec }> {
    const token = randomBytes(32).toString('base64url');
    const rec: AccountTokenRec = {
      id: newId(),
      team_id: user.team_id,
      created_at: nowIso(),
      user_id: user.id,
      kind,
      token_hash: sha256hex(token),
      expires_at: Date.now() + ttlMs,
      ...(email ? { email } : {}),
    };
    await this.store.write(async (tx) => {
      for (const old of await tx.accountTokens.all(user.team_id))
        if (old.user_id === user.id && old.kind === kind) tx.accountTokens.remove(user.team_id, old.id);
      tx.accountTokens.put(rec);
    });
    return { token, rec };
  }

  /**
   * Use up a live token of `kind` and make its change (`apply`, which writes the user) in one unit
   * of work, so a link works once however often it is opened at the same time.
   */
  private async redeem(
    token: string | null,
    kind: AccountTokenRec['kind'],
    apply: (tx: Tx, user: UserRec, rec: AccountTokenRec) => Promise<UserRec> | UserRec,
  ): Promise<UserRec> {
    const found = token !== null && TOKEN_RE.test(token) ? await this.store.accountTokens.find('token', sha256hex(token)) : undefined;
    if (!found || found.kind !== kind || found.expires_at <= Date.now()) throw errors.notFound('Link');
    return this.store.write(async (tx) => {
      const rec = await tx.accountTokens.get(found.team_id, found.id);
      const user = rec && (await tx.users.get(rec.team_id, rec.user_id));
      if (!rec || !user) throw errors.notFound('Link');
      const next = await apply(tx, user, rec);
      tx.accountTokens.remove(rec.team_id, rec.id);
      tx.users.put(next);
      return next;
    });
  }

  /**
   * Mail a reset link if an account has `email`. Resolves the same either way (and takes the same
   * path up to the mail); 429 past the limit, for any address.
   */
  async requestReset(text: string, ip: string | null): Promise<UserRec | null> {
    const email = checkEmail(text);
    const address = [email];
    const client = [clientKey(ip)];
    const wait = Math.max(this.perAddress.lockedFor(address), this.perClient.lockedFor(client));
    if (wait) {
      const minutes = Math.ceil(wait / 60_000);
      throw new ApiError(429, 'rate_limit_exceeded', `Too many password reset requests. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
    }
    this.perAddress.fail(address);
    this.perClient.fail(client);
    const user = await this.store.users.find('email', email);
    if (!user) {
      log.info('auth.password_reset_unknown', { ip });
      return null;
    }
    const { token } = await this.issue(user, 'password_reset', RESET_MINUTES * 60_000);
    const sent = await this.mail.send(passwordResetMessage(user.email, `${this.publicUrl}/dashboard/reset-password/${token}`, RESET_MINUTES));
    log.info('auth.password_reset_requested', { user: user.id, sent });
    return user;
  }

  /** Choose a new password with a reset link: every session of the user ends (they sign in again, with their second factor if on). */
  async resetPassword(token: string | null, password: string): Promise<UserRec> {
    checkPassword(password);
    const hash = await Bun.password.hash(password);
    const user = await this.redeem(token, 'password_reset', (_tx, cur) => ({ ...cur, password_hash: hash, password_changed_at: nowIso() }));
    await this.sessions.revokeAll(user);
    this.signIn.forgetFailures(user.email);
    return user;
  }

  /** Ask to use a new address: the password again, then a link mailed to the new address. */
  async requestEmailChange(user: UserRec, text: string, password: string, ip: string | null): Promise<AccountTokenRec> {
    const email = checkEmail(text);
    await this.signIn.confirmPassword(user, password, ip);
    if (email === user.email.toLowerCase()) throw errors.validation('This is already your address.');
    const { token, rec } = await this.issue(user, 'email_change', EMAIL_CHANGE_HOURS * 3_600_000, email);
    const sent = await this.mail.send(emailChangeMessage(email, `${this.publicUrl}/dashboard/confirm-email/${token}`, EMAIL_CHANGE_HOURS));
    if (!sent) {
      await this.store.write(async (tx) => tx.accountTokens.remove(rec.team_id, rec.id));
      throw errors.validation(
        `Posthorn cannot send mail yet, so it cannot confirm a new address: verify the domain of ${this.mail.from} (auth.system_from) in a team of this server.`,
      );
    }
    return rec;
  }

  /** Confirm a new address: the account uses it from now on. An address taken meanwhile → 422. */
  async confirmEmailChange(token: string | null): Promise<UserRec> {
    return this.redeem(token, 'email_change', async (tx, cur, rec) => {
      const email = rec.email!;
      const taken = await tx.users.find('email', email);
      if (taken && taken.id !== cur.id) throw errors.validation(`${email} already has an account.`);
      return { ...cur, email };
    });
  }
}
