// The rules delivery applies, checked directly: reply parsing and bounce classification (RFC 3463,
// docs/api.md §14.3), retry waits, MX ordering (RFC 5321 §5.1), VERP tokens.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseReply, verdict, bounceFor, bounceSubType } from '../../src/mail/smtp-reply';
import { retryWait, windowOver, nextAttemptAt, jittered, JITTER } from '../../src/work/retry';
import { byPreference } from '../../src/delivery/mx';
import { Verp } from '../../src/mail/verp';
import { resolveVerp } from '../../src/feedback';
import { openStore } from '../../src/store';
import { loadConfig, ConfigError } from '../../src/config';

const reply = (raw: string) => parseReply(raw)!;

describe('replies', () => {
  test('multi-line replies fold into one line, the code kept once', () => {
    expect(parseReply('550-5.1.1 The email account that you tried to reach does not exist.\n550-5.1.1 Please try\n550 5.1.1 double-checking.')).toEqual({
      code: 550,
      text: '550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking.',
    });
    expect(parseReply('250 2.0.0 Ok: queued as 12345')).toEqual({ code: 250, text: '250 2.0.0 Ok: queued as 12345' });
    expect(parseReply('hello')).toBeNull();
  });

  test('2xx delivered, 4xx temporary, 5xx permanent; 503 (bad sequence) temporary', () => {
    expect(['250 ok', '451 4.3.0 later', '550 5.1.1 no', '503 5.5.1 bad sequence'].map((r) => verdict(reply(r)))).toEqual([
      'delivered',
      'temporary',
      'permanent',
      'temporary',
    ]);
  });

  test('bounce sub-types from the enhanced status code', () => {
    const cases: [string, string][] = [
      ['550 5.1.1 user unknown', 'NoEmail'],
      ['553 5.1.3 bad address syntax', 'NoEmail'],
      ['556 5.1.10 null MX', 'NoEmail'],
      ['552 5.2.2 mailbox full', 'MailboxFull'],
      ['452 4.2.2 over quota', 'MailboxFull'],
      ['552 5.3.4 message too big', 'MessageTooLarge'],
      ['550 5.7.1 spam', 'ContentRejected'],
      ['554 5.7.26 DMARC policy', 'ContentRejected'],
      ['550 5.2.1 mailbox disabled', 'General'],
      ['554 transaction failed', 'General'],
      ['451 4.1.1 temporarily unknown', 'General'],
    ];
    expect(cases.map(([r]) => [r, bounceSubType(reply(r))])).toEqual(cases);
  });

  test('bounce objects carry the diagnostic code as smtp; <reply>', () => {
    expect(bounceFor(reply('550 5.1.1 <a@b.test>: unknown'), 'Permanent')).toEqual({
      type: 'Permanent',
      subType: 'NoEmail',
      message: "The recipient's mailbox does not exist.",
      diagnosticCode: ['smtp; 550 5.1.1 <a@b.test>: unknown'],
    });
    expect(bounceFor(reply('421 4.4.2 timeout'), 'Transient')).toMatchObject({
      type: 'Transient',
      subType: 'General',
      diagnosticCode: ['smtp; 421 4.4.2 timeout'],
    });
  });
});

describe('retry schedule', () => {
  test('the wait after attempt n is schedule[n-1], the last one repeating', () => {
    const s = [1000, 5000, 60_000];
    expect([1, 2, 3, 4, 10].map((n) => retryWait(s, n))).toEqual([1000, 5000, 60_000, 60_000, 60_000]);
  });

  test('waits are stretched by up to JITTER (10 %), never shortened', () => {
    expect(JITTER).toBe(0.1);
    expect(jittered(60_000, () => 0)).toBe(60_000);
    expect(jittered(60_000, () => 0.5)).toBe(63_000);
    expect(jittered(60_000, () => 0.999_999)).toBe(66_000);
    for (let i = 0; i < 200; i++) {
      const w = jittered(60_000);
      expect(w).toBeGreaterThanOrEqual(60_000);
      expect(w).toBeLessThanOrEqual(66_000);
    }
    // The next attempt time: now + the jittered wait, still capped by the end of the window.
    const first = new Date(0).toISOString();
    expect(nextAttemptAt([1000], 1, first, 10_000, 5000, () => 0.5)).toBe(6050);
    expect(nextAttemptAt([1000], 1, first, 10_000, 9500, () => 0.5)).toBe(10_000);
  });

  test('the window counts from the first attempt', () => {
    const first = new Date(1_000_000).toISOString();
    expect(windowOver(first, 500, 1_000_400)).toBe(false);
    expect(windowOver(first, 500, 1_000_500)).toBe(true);
    expect(windowOver(null, 500, 9_999_999)).toBe(false);
  });
});

describe('delivery.retry_window', () => {
  test('72 h by default; a duration from the file, POSTHORN_DELIVERY_RETRY_WINDOW or an override', () => {
    expect(loadConfig({ env: {} }).delivery.retry_window).toBe(72 * 3_600_000);
    expect(loadConfig({ env: { POSTHORN_DELIVERY_RETRY_WINDOW: '3d' } }).delivery.retry_window).toBe(3 * 86_400_000);
    expect(loadConfig({ env: {}, overrides: { 'delivery.retry_window': '90m' } }).delivery.retry_window).toBe(90 * 60_000);
    for (const bad of ['soon', '0s', '72']) {
      let err: unknown;
      try {
        loadConfig({ env: { POSTHORN_DELIVERY_RETRY_WINDOW: bad } });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).key).toBe('delivery.retry_window');
    }
  });
});

describe('MX order', () => {
  test('lowest preference first; equal preferences in random order', () => {
    const records = [
      { exchange: 'c.test', priority: 30 },
      { exchange: 'a1.test', priority: 10 },
      { exchange: 'b.test', priority: 20 },
      { exchange: 'a2.test.', priority: 10 },
    ];
    const seen = new Set<string>();
    for (let i = 0; i < 200 && seen.size < 2; i++) {
      const order = byPreference(records);
      expect(order.slice(2)).toEqual(['b.test', 'c.test']);
      expect([...order.slice(0, 2)].sort()).toEqual(['a1.test', 'a2.test']);
      seen.add(order.join(','));
    }
    expect(seen.size).toBe(2);
  });
});

describe('retry timing', () => {
  const H = 3_600_000;
  test('the wait counts from the failure, and the last try falls exactly when the window closes', () => {
    const { retry_schedule, retry_window } = loadConfig({ env: {} }).delivery;
    const first = 0;
    let now = first;
    const tries: number[] = [];
    // Every attempt fails; each takes 2 minutes.
    for (let attempt = 1; attempt < 100; attempt++) {
      tries.push(now);
      const failedAt = now + 120_000;
      if (windowOver(new Date(first).toISOString(), retry_window, failedAt)) break;
      // Without jitter (random 0): the schedule's exact waits.
      now = nextAttemptAt(retry_schedule, attempt, new Date(first).toISOString(), retry_window, failedAt, () => 0);
      expect(now - failedAt).toBeLessThanOrEqual(retryWait(retry_schedule, attempt));
    }
    expect(tries[1]! - tries[0]!).toBe(120_000 + retryWait(retry_schedule, 1));
    expect(tries.at(-1)).toBe(first + retry_window); // no attempt after 72 h, and one right at it
    expect(retry_window).toBe(72 * H);
  });
});

describe('VERP', () => {
  const dirs: string[] = [];
  const open = async (dir?: string) => {
    const d = dir ?? mkdtempSync(join(tmpdir(), 'posthorn-verp-'));
    if (!dir) dirs.push(d);
    return { dir: d, store: await openStore({ dataDir: d, retentionDays: 30, holdMs: 0 }) };
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const id = '0195608a-51e4-70ed-a079-d3bde8e25d94';
  const domain = { name: 'example.test', custom_return_path: 'send' };

  const team = '0195606f-e220-752e-89a7-834df2a74de4';
  /** A store holding `example.test` and an email to a@dest.test and b@other.test (only what VERP reads). */
  const withEmail = async (dir?: string) => {
    const o = await open(dir);
    const now = new Date().toISOString();
    await o.store.write(async (tx) => {
      tx.domains.put({ id: 'd1', team_id: team, created_at: now, ...domain } as never);
      tx.emails.put({
        id,
        team_id: team,
        created_at: now,
        domain_id: 'd1',
        scheduled_at: null,
        recipients: { 'a@dest.test': 'pending', 'b@other.test': 'pending' },
      } as never);
    });
    return o;
  };

  test('round trip; the local part fits RFC 5321 §4.5.3.1.1 (64 octets)', async () => {
    const { store } = await withEmail();
    const verp = new Verp(store.secret('verp'));
    const resolve = (address: string) => resolveVerp(store, verp, address);
    const addr = verp.sender(id, domain, 'dest.test');
    expect(addr).toMatch(/^bounces\+0195608a51e470eda079d3bde8e25d94-[0-9a-f]{10}@send\.example\.test$/);
    expect(addr.split('@')[0]!.length).toBeLessThanOrEqual(64);
    const expected = { team_id: team, email_id: id, domain_id: 'd1', recipient_domain: 'dest.test' };
    expect(await resolve(addr)).toEqual(expected);
    expect(await resolve(addr.toUpperCase())).toEqual(expected);
    // Each delivery's return path speaks for its own recipient domain only.
    expect((await resolve(verp.sender(id, domain, 'other.test')))?.recipient_domain).toBe('other.test');
    await store.close();
  });

  test('a forged or mangled token is refused', async () => {
    const { store } = await withEmail();
    const verp = new Verp(store.secret('verp'));
    const resolve = (address: string) => resolveVerp(store, verp, address);
    const addr = verp.sender(id, domain, 'dest.test');
    expect(await resolve(addr)).not.toBeNull(); // the control: the genuine address resolves
    expect(await resolve(addr.replace(/-[0-9a-f]{10}@/, '-0000000000@'))).toBeNull();
    expect(await resolve(addr.replace('d3bde8e25d94', 'd3bde8e25d95'))).toBeNull();
    expect(await resolve(verp.sender(id, domain, 'elsewhere.test'))).toBeNull(); // not a recipient domain
    expect(await resolve(addr.replace('@send.', '@other.'))).toBeNull();
    expect(await resolve('bounces@send.example.test')).toBeNull();
    expect(await resolve('someone@example.test')).toBeNull();
    await store.close();
  });

  test('the secret is created once per install and survives a restart; another install differs', async () => {
    const a = await open();
    const first = new Verp(a.store.secret('verp')).token(id, 'dest.test');
    await a.store.close();
    const again = await open(a.dir);
    expect(new Verp(again.store.secret('verp')).token(id, 'dest.test')).toBe(first);
    await again.store.close();
    const b = await open();
    expect(new Verp(b.store.secret('verp')).token(id, 'dest.test')).not.toBe(first);
    await b.store.close();
  });
});
