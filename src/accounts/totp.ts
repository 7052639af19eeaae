// Two-factor sign-in with time-based one-time passwords (RFC 6238; the `otpauth` package does the
// HOTP/TOTP arithmetic of RFC 4226 §5). Enrolment stores a fresh key that is not yet enabled; the
// first valid code enables it and returns recovery codes, shown once and stored as SHA-256.
// A code is accepted once (RFC 6238 §5.2): the last accepted time step is kept on the user.
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import type { UserRec } from '../store';
import { randomAlnum, sha256hex } from '../ids';

/** ±1 step of 30 s for clock drift (RFC 6238 §5.2 and §6). */
const WINDOW = 1;
const PERIOD = 30;
const RECOVERY_CODES = 10;

export interface TotpState {
  secret: string;
  enabled_at: string | null;
  /** The time step (`unix time / 30`) of the last accepted code. */
  last_step?: number;
}

function totpFor(email: string, secret: string): TOTP {
  return new TOTP({ issuer: 'Posthorn', label: email, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(secret) });
}

/** A new key for `email`: the base32 text, its otpauth:// URI and that URI as a QR code (SVG). */
export async function newEnrolment(email: string): Promise<{ secret: string; uri: string; qr_svg: string }> {
  const secret = new Secret({ size: 20 }).base32;
  const uri = totpFor(email, secret).toString();
  const qr_svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { secret, uri, qr_svg };
}

/**
 * The time step a 6-digit `code` matches for the user's key, or null. A step at or before the
 * last accepted one is refused: the same code never signs in twice.
 */
export function matchStep(email: string, totp: TotpState, code: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpFor(email, totp.secret).validate({ token: code, timestamp: now, window: WINDOW });
  if (delta === null) return null;
  const step = Math.floor(now / 1000 / PERIOD) + delta;
  return totp.last_step !== undefined && step <= totp.last_step ? null : step;
}

/** Fresh recovery codes (`xxxxx-xxxxx`) and the hashes to store. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODES }, () => {
    const t = randomAlnum(10).toLowerCase();
    return `${t.slice(0, 5)}-${t.slice(5)}`;
  });
  return { codes, hashes: codes.map(hashRecoveryCode) };
}

export function hashRecoveryCode(code: string): string {
  return sha256hex(code.trim().toLowerCase().replace(/\s+/g, ''));
}

export function totpEnabled(user: UserRec): boolean {
  return !!user.totp?.enabled_at;
}
