// Failure limits for guessable secrets (dashboard passwords, TOTP codes): after `threshold`
// failures within `window` a key is locked out, for `lockout` and twice as long after every
// further failure (capped at `maxLockout`). A success clears the key. Callers pass several keys
// at once — the account and the client address — so one address cannot walk through accounts and
// many addresses cannot hammer one account faster than the lockout allows.
// In memory and bounded: a restart forgets the counts, which only ever helps the one guessing
// slower than a restart, and the map never holds more than `maxKeys` entries.

import { isIPv6 } from 'node:net';

/**
 * The key of a client address for per-client limits: an IPv4 address as it is (an IPv4-mapped
 * IPv6 one unwrapped), an IPv6 address by its /64 — one customer's prefix, so that walking through
 * the 2^64 addresses of one network does not reset the count (RFC 6177 §2 on end-site prefixes).
 */
export function clientKey(ip: string | null | undefined): string {
  if (!ip) return '';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  // Expand `::` so the first four groups are known.
  const [head, tail = ''] = ip.split('::') as [string, string?];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

export interface FailurePolicy {
  threshold: number;
  window: number;
  lockout: number;
  maxLockout: number;
  maxKeys?: number;
}

interface Entry {
  failures: number;
  first: number;
  lockedUntil: number;
}

export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly policy: FailurePolicy) {}

  /** Milliseconds until every key is unlocked; 0 when none is locked. */
  lockedFor(keys: string[], now = Date.now()): number {
    let wait = 0;
    for (const k of keys) {
      const e = this.entries.get(k);
      if (e && e.lockedUntil > now) wait = Math.max(wait, e.lockedUntil - now);
    }
    return wait;
  }

  /** Count a failure against every key; returns how long the keys are now locked for (0: not). */
  fail(keys: string[], now = Date.now()): number {
    const { threshold, window, lockout, maxLockout } = this.policy;
    for (const k of keys) {
      let e = this.entries.get(k);
      if (!e || (now - e.first > window && e.lockedUntil <= now)) e = { failures: 0, first: now, lockedUntil: 0 };
      e.failures++;
      if (e.failures >= threshold) e.lockedUntil = now + Math.min(maxLockout, lockout * 2 ** (e.failures - threshold));
      // Re-insert so the map's order is least recently failed first (the eviction order).
      this.entries.delete(k);
      this.entries.set(k, e);
    }
    this.evict();
    return this.lockedFor(keys, now);
  }

  /** Failures counted against a key in its current window. */
  failures(key: string): number {
    return this.entries.get(key)?.failures ?? 0;
  }

  succeed(keys: string[]): void {
    for (const k of keys) this.entries.delete(k);
  }

  private evict(): void {
    const max = this.policy.maxKeys ?? 50_000;
    for (const k of this.entries.keys()) {
      if (this.entries.size <= max) break;
      this.entries.delete(k);
    }
  }
}

/**
 * Pairs (an account and a client address) that passed recently: an account's lockout must not be a
 * way to shut its owner out from anywhere (OWASP ASVS 4.0 §2.2.1, soft lockout and allow-listing),
 * so the lock of an account does not hold for an address that signed in to it within `ttl`; that
 * address's own failures still lock it. In memory and bounded like FailureLimiter: a restart forgets
 * them, and the account lock then holds for everyone until they sign in again.
 */
export class RecentSuccesses {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly ttl: number,
    private readonly maxKeys = 50_000,
  ) {}

  note(key: string, now = Date.now()): void {
    this.seen.delete(key);
    this.seen.set(key, now);
    for (const k of this.seen.keys()) {
      if (this.seen.size <= this.maxKeys) break;
      this.seen.delete(k);
    }
  }

  has(key: string, now = Date.now()): boolean {
    const at = this.seen.get(key);
    return at !== undefined && now - at < this.ttl;
  }
}
