// Signing in to the dashboard and what guards it (docs/api.md §19): the password (argon2id through
// `Bun.password`), then a TOTP or recovery code when two-factor sign-in is on. Failures count
// against the account and the client address; past the threshold both are locked out for a
// growing time (429 with Retry-After) — but the account's lock does not hold for an address that
// signed in to it in the last 30 days (ASVS 4.0 §2.2.1: a lockout must not lock the owner out). Password and TOTP changes live here too, since they check
// the same secrets.
import type { Store, UserRec } from '../store';
import { ApiError, errors } from '../errors';
import { nowIso } from '../ids';
import { FailureLimiter, RecentSuccesses, clientKey } from '../limits/failures';
import { log } from '../log';
import type { NewSession, SessionMeta, Sessions } from './sessions';
import { switchErrors, type TeamSwitches } from './switches';
import { hashRecoveryCode, matchStep, newEnrolment, newRecoveryCodes, totpEnabled } from './totp';

export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;

export const authErrors = {
  badCredentials: () => new ApiError(401, 'invalid_credentials', 'The email or password is incorrect.'),
  codeRequired: () => new ApiError(401, 'totp_required', 'Enter the 6-digit code from your authenticator app, or a recovery code.'),
  badCode: () => new ApiError(401, 'invalid_totp_code', 'The code is not valid. Codes change every 30 seconds; each works once.'),
  lockedOut: (ms: number) => {
    const minutes = Math.max(1, Math.ceil(ms / 60_000));
    return new ApiError(429, 'rate_limit_exceeded', `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, {
      'retry-after': String(Math.ceil(ms / 1000)),
    });
  },
  weakPassword: () => errors.invalidField('password', `use at least ${MIN_PASSWORD} characters.`),
};

/** A hash to verify against when the account does not exist, so both cases take as long. */
let dummyHash: Promise<string> | undefined;

/** Verifies against the dummy hash (taking as long as a real check) and answers no. */
async function verifyNoAccount(password: string): Promise<false> {
  dummyHash ??= Bun.password.hash('posthorn-no-such-user');
  await Bun.password.verify(password, await dummyHash);
  return false;
}

/** The failure-limit keys of one check (SignIn.keys). */
interface GuardKeys {
  /** The account's and the address's. */
  all: string[];
  /** The pair, noted on success (RecentSuccesses). */
  known: string;
}

export class SignIn {
  /** 5 failures in 15 minutes lock for 1 minute, doubling to at most an hour. */
  private readonly guard = new FailureLimiter({ threshold: 5, window: 15 * 60_000, lockout: 60_000, maxLockout: 3_600_000 });
  /** Accounts and the addresses that signed in to them: past the account's lock (not their own). */
  private readonly known = new RecentSuccesses(30 * 24 * 3_600_000);

  constructor(
    private readonly store: Store,
    private readonly sessions: Sessions,
    private readonly switches: TeamSwitches,
  ) {}

  async withPassword(input: { email: string; password: string; code?: string }, meta: SessionMeta): Promise<NewSession> {
    const email = input.email.trim().toLowerCase();
    const keys = this.keys(email, meta.ip);
    const user = await this.store.users.find('email', email);
    await this.guarded(keys, { what: 'password', email, ip: meta.ip }, authErrors.badCredentials, async () =>
      user ? Bun.password.verify(input.password, user.password_hash) : verifyNoAccount(input.password),
    );
    if (totpEnabled(user!)) {
      if (!input.code) throw authErrors.codeRequired();
      await this.guarded(keys, { what: 'code', email, ip: meta.ip }, authErrors.badCode, () => this.useSecondFactor(user!, input.code!));
    }
    this.succeed(keys);
    // Checked after the password, so the answer tells nobody without it how the team signs in.
    if (this.switches.refusesPassword(await this.switches.team(user!.team_id))) throw switchErrors.oidcRequired();
    log.info('auth.signed_in', { user: user!.id, method: 'password', ip: meta.ip });
    return this.sessions.create(user!, meta);
  }

  /** The failure keys of a check: the account, the address, and whether that address is known to the account. */
  private keys(email: string, ip: string | null): GuardKeys {
    const account = `account ${email}`;
    const address = `ip ${clientKey(ip)}`;
    return { all: [account, address], known: `${account} ${address}` };
  }

  /** A password reset by mail proved the account's owner: its lock ends (their address's own lock does not). */
  forgetFailures(email: string): void {
    this.guard.succeed([this.keys(email.toLowerCase(), null).all[0]!]);
  }

  private succeed(keys: GuardKeys): void {
    this.guard.succeed(keys.all);
    this.known.note(keys.known);
  }

  /**
   * Run one check of a secret under the failure limits: refused at once while the keys are locked
   * out (a known address only by its own lock); a failed check counts against every key and
   * answers `refused` (or the lockout it caused).
   */
  private async guarded(
    keys: GuardKeys,
    about: { what: string; email: string; ip: string | null },
    refused: () => ApiError,
    check: () => Promise<boolean>,
  ): Promise<void> {
    const holding = this.known.has(keys.known) ? keys.all.slice(1) : keys.all;
    const locked = this.guard.lockedFor(holding);
    if (locked) throw authErrors.lockedOut(locked);
    if (await check()) return;
    this.guard.fail(keys.all);
    const now = this.guard.lockedFor(holding);
    log.warn('auth.sign_in_failed', { ...about, locked_ms: now });
    throw now ? authErrors.lockedOut(now) : refused();
  }

  /** Check a TOTP or recovery code and use it up, in one unit of work. */
  private useSecondFactor(user: UserRec, code: string): Promise<boolean> {
    const text = code.replace(/\s+/g, '');
    return this.store.write(async (tx) => {
      const cur = await tx.users.get(user.team_id, user.id);
      if (!cur?.totp?.enabled_at) return false;
      const step = matchStep(cur.email, cur.totp, text);
      if (step !== null) {
        tx.users.put({ ...cur, totp: { ...cur.totp, last_step: step } });
        return true;
      }
      const hash = hashRecoveryCode(text);
      if (!cur.recovery_codes?.includes(hash)) return false;
      tx.users.put({ ...cur, recovery_codes: cur.recovery_codes.filter((h) => h !== hash) });
      return true;
    });
  }

  /** Re-check the password of a signed-in user (before a change of secrets), with the same limits. */
  async confirmPassword(user: UserRec, password: string, ip: string | null): Promise<void> {
    const keys = this.keys(user.email.toLowerCase(), ip);
    await this.guarded(
      keys,
      { what: 'current password', email: user.email, ip },
      () => new ApiError(403, 'invalid_credentials', 'The current password is incorrect.'),
      () => Bun.password.verify(password, user.password_hash),
    );
    this.succeed(keys);
  }

  /** Set a new password and end the user's other sessions. */
  async changePassword(user: UserRec, current: string, next: string, ip: string | null, keepSession: string): Promise<void> {
    checkPassword(next);
    await this.confirmPassword(user, current, ip);
    const hash = await Bun.password.hash(next);
    await this.store.write(async (tx) => {
      const cur = await tx.users.get(user.team_id, user.id);
      if (cur) tx.users.put({ ...cur, password_hash: hash, password_changed_at: nowIso() });
    });
    await this.sessions.revokeAll(user, keepSession);
  }

  /** Start (or restart) TOTP enrolment: a new key, not enabled until `confirmTotp`. */
  async beginTotp(user: UserRec) {
    if (totpEnabled(user)) throw errors.validation('Two-factor sign-in is already on. Turn it off first to enrol a new device.');
    const enrolment = await newEnrolment(user.email);
    await this.store.write(async (tx) => {
      const cur = await tx.users.get(user.team_id, user.id);
      if (cur) tx.users.put({ ...cur, totp: { secret: enrolment.secret, enabled_at: null } });
    });
    return enrolment;
  }

  /** The first valid code turns TOTP on; the recovery codes are returned this once. */
  async confirmTotp(user: UserRec, code: string): Promise<string[]> {
    const { codes, hashes } = newRecoveryCodes();
    const ok = await this.store.write(async (tx) => {
      const cur = await tx.users.get(user.team_id, user.id);
      if (!cur?.totp || cur.totp.enabled_at) return null;
      const step = matchStep(cur.email, cur.totp, code.replace(/\s+/g, ''));
      if (step === null) return false;
      tx.users.put({ ...cur, totp: { ...cur.totp, enabled_at: nowIso(), last_step: step }, recovery_codes: hashes });
      return true;
    });
    if (ok === null) throw errors.validation('Start the enrolment first (POST /auth/totp).');
    if (!ok) throw authErrors.badCode();
    log.info('auth.totp_enabled', { user: user.id });
    return codes;
  }

  async disableTotp(user: UserRec, password: string, ip: string | null): Promise<void> {
    await this.confirmPassword(user, password, ip);
    await this.store.write(async (tx) => {
      const cur = await tx.users.get(user.team_id, user.id);
      if (cur) tx.users.put({ ...cur, totp: null, recovery_codes: [] });
    });
    log.info('auth.totp_disabled', { user: user.id });
  }
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) throw authErrors.weakPassword();
}
