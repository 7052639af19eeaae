// The catalogue of event kinds and statuses (src/event-catalogue.ts) against what depends on it:
// the SDK's types (Resend's webhook kinds and `last_event` values), the tables of docs/api.md
// §7.8, §7.9 and §14.2, its own rules, and the event function — every event it makes, on a real
// store, is catalogued as made, and reaches the webhook sinks exactly when catalogued so.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { GetEmailResponseSuccess, WebhookEvent } from 'resend';
import ts from 'typescript';
import {
  COUNTERS,
  EMAIL_BADGES,
  EMAIL_STATUSES,
  EMITTED_WEBHOOK_KINDS,
  EVENT_KINDS,
  WEBHOOK_KINDS,
  infoOf,
  isSubscribableKind,
  isWebhookKind,
  SUBSCRIBABLE_KINDS,
  kindInfo,
  statusInfo,
  type EmailStatus,
  type EventKind,
  type WebhookKind,
} from '../../src/event-catalogue';
import { openStore, type EmailRec, type EventRec, type Store } from '../../src/store';
import { Events } from '../../src/events';
import { newId } from '../../src/ids';

// Compile-time: `npm run typecheck` fails when the catalogue and the SDK disagree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameWebhookKinds: Same<WebhookKind, WebhookEvent> = true;
const sameStatuses: Same<EmailStatus, GetEmailResponseSuccess['last_event']> = true;

const ROOT = resolve(import.meta.dir, '../..');
const kinds = Object.keys(EVENT_KINDS) as EventKind[];

/** The lines of docs/api.md from the heading `start` to the next heading. */
function section(start: string): string {
  const text = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const from = text.indexOf(`\n${start}`);
  expect(from).toBeGreaterThan(-1);
  const rest = text.slice(from + 1);
  const end = rest.slice(start.length).search(/\n#{2,3} /);
  return end === -1 ? rest : rest.slice(0, start.length + end);
}

/** Backticked names of a Markdown table cell. */
const names = (cell = '') => [...cell.matchAll(/`([^`]+)`/g)].map(([, name]) => name as string);

describe('the catalogue', () => {
  test('its webhook kinds are Resend’s and its statuses the SDK’s `last_event`', () => {
    expect(sameWebhookKinds && sameStatuses).toBe(true);
    expect(WEBHOOK_KINDS.length).toBe(37);
    expect(WEBHOOK_KINDS.every(isWebhookKind)).toBe(true);
    expect(isWebhookKind('email.queued')).toBe(false);
    expect(isWebhookKind('email.unsubscribed')).toBe(false);
    expect(isWebhookKind('toString')).toBe(false);
  });

  test('its entries keep its rules', () => {
    for (const k of kinds) {
      const i = infoOf(k);
      // A kind Posthorn never makes is only there because webhooks may subscribe to it.
      if (i.emits === null) expect(i.webhook, k).toBe(true);
      // Sent to webhooks: one of Resend's kinds, or one of Posthorn's own (never both).
      if (i.emits === 'webhook') expect(i.webhook || i.extension, k).toBe(true);
      if (i.extension) expect([i.webhook, i.emits], k).toEqual([false, 'webhook']);
      // `email.<status>` leads to `<status>`: the event function and the log rely on it.
      if (i.status !== undefined) expect(`email.${i.status}`, k).toBe(k);
      if (i.status !== undefined || i.recipients !== undefined) expect(i.record, k).toBe('email');
      // Every event an email's log can hold has a badge.
      if (i.record === 'email' && i.emits !== null) expect(i.label && i.tone, k).toBeTruthy();
      if (i.emits === null) expect([i.count, i.operator, i.status], k).toEqual([undefined, undefined, undefined]);
    }
    expect(kindInfo('toString')).toBeUndefined();
    expect(kindInfo('email.delivered')).toBe(EVENT_KINDS['email.delivered']);
  });

  test('the counters it names are the counters it lists, each moved by some kind', () => {
    const named = kinds.flatMap((k) => {
      const c = infoOf(k).count;
      if (!c) return [];
      if (c.per === 'hit') return [c.counter, c.unique];
      return [c.counter, ...Object.values(c.per === 'email' ? (c.byBounceType ?? {}) : {})];
    });
    expect(new Set(named)).toEqual(new Set(COUNTERS));
  });

  test('the derived lists: statuses in order, emitted webhook kinds, badges', () => {
    expect(EMAIL_STATUSES).toEqual(kinds.filter((k) => infoOf(k).status).map((k) => k.slice('email.'.length)) as EmailStatus[]);
    expect(EMAIL_STATUSES.map((s) => statusInfo(s).status)).toEqual([...EMAIL_STATUSES]);
    // The dashboard's webhook form offers these: contact.topics.updated among them.
    expect(EMITTED_WEBHOOK_KINDS).toContain('contact.topics.updated');
    expect(EMITTED_WEBHOOK_KINDS.every((k) => WEBHOOK_KINDS.includes(k as never) || infoOf(k).extension)).toBe(true);
    // POST /webhooks accepts Resend's kinds and Posthorn's own; Posthorn's are not Resend's.
    expect(SUBSCRIBABLE_KINDS).toEqual([...WEBHOOK_KINDS, 'deliverability.incident']);
    expect(isSubscribableKind('deliverability.incident')).toBe(true);
    expect(isWebhookKind('deliverability.incident')).toBe(false);
    expect(isSubscribableKind('email.queued')).toBe(false);
    // Every Resend kind is made since the inboxes (docs/api.md §25.8), the last of them `inbox.draft.sent`.
    expect(WEBHOOK_KINDS.filter((k) => !EMITTED_WEBHOOK_KINDS.includes(k as never))).toEqual([]);
    expect(EMITTED_WEBHOOK_KINDS).toContain('inbox.draft.sent');
    expect(Object.keys(EMAIL_BADGES).sort()).toEqual([...EMAIL_STATUSES, 'unsubscribed'].sort());
    expect(EMAIL_BADGES.delivery_delayed).toEqual({ label: 'delivery delayed', tone: 'amber' });
  });

  test('the dashboard can bundle it: it imports nothing', () => {
    const text = readFileSync(join(ROOT, 'src/event-catalogue.ts'), 'utf8');
    // Imports, `export … from`, import(), require(): type-only ones too (web/ typechecks what it imports).
    expect(ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName)).toEqual([]);
  });
});

describe('docs/api.md says what the catalogue says', () => {
  test('§7.8: the statuses in order, and which ones a webhook reports', () => {
    const rows = section('### 7.8')
      .split('\n')
      .filter((l) => /^\| `/.test(l))
      .map((l) => l.split('|').map((c) => c.trim()));
    expect(rows.flatMap((r) => names(r[1]))).toEqual([...EMAIL_STATUSES]);
    const reported = rows.flatMap((r) => names(r[3]));
    expect(reported).toEqual(EMAIL_STATUSES.filter((s) => statusInfo(s).emits === 'webhook').map((s) => `email.${s}`));
  });

  test('§7.9: the counters in order', () => {
    const [, counts = ''] = /- Counts: `([^`]+)`/.exec(section('### 7.9')) ?? [];
    expect(counts.split(/,\s*/)).toEqual([...COUNTERS]);
  });

  test('§14.2: the kinds Posthorn sends, and those accepted that never fire', () => {
    const text = section('### 14.2');
    const sent = text
      .split('\n')
      .filter((l) => /^\| `/.test(l))
      .flatMap((l) => names(l.split('|')[1]));
    expect(new Set(sent)).toEqual(new Set(EMITTED_WEBHOOK_KINDS));
    // `domain.created|updated|deleted` and `inbox.*` are written short.
    const never = names(/never emitted:([\s\S]*)/.exec(text)?.[1]).flatMap((n) => {
      if (n.endsWith('.*')) return WEBHOOK_KINDS.filter((k) => k.startsWith(n.slice(0, -1)));
      const [, prefix = '', actions = ''] = /^(.*\.)([^.]*)$/.exec(n) ?? [];
      return actions.split('|').map((a) => prefix + a);
    });
    expect(new Set(never)).toEqual(new Set(WEBHOOK_KINDS.filter((k) => !EMITTED_WEBHOOK_KINDS.includes(k as never))));
  });
});

describe('the event function makes only what the catalogue says it makes', () => {
  let dir: string;
  let store: Store;
  const TEAM = newId();
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'posthorn-catalogue-'));
    store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const email = (): EmailRec => ({
    id: newId(),
    team_id: TEAM,
    created_at: new Date().toISOString(),
    from: 'a@x.test',
    from_address: 'a@x.test',
    domain_id: newId(),
    domain: 'x.test',
    to: ['r@dest.test'],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: 's',
    headers: {},
    tags: [],
    scheduled_at: null,
    last_event: 'queued',
    message_id: '<m@x.test>',
    broadcast_id: newId(),
    attachments: [],
    recipients: { 'r@dest.test': 'pending' },
    sent_at: null,
    api_key_id: null,
  });

  /** Run `fn` with a fresh event function; what its observers and webhook sinks were handed. */
  async function made(fn: (events: Events) => Promise<unknown>) {
    const events = new Events();
    const observed: EventRec[] = [];
    const sunk: EventRec[] = [];
    events.observe((ev) => observed.push(ev));
    events.onEvent((_tx, ev) => {
      sunk.push(ev);
      return undefined;
    });
    await fn(events);
    return { observed, sunk };
  }

  test.each([...EMAIL_STATUSES])('Events.email(…, %p): its kind, logged as catalogued', async (status) => {
    const e = email();
    const { observed, sunk } = await made((events) =>
      store.write(async (tx) => {
        tx.emails.put(e);
        await events.email(tx, e, status, { recipients: ['r@dest.test'], bounce: { type: 'Permanent', subType: 'General', message: 'no' } });
      }),
    );
    const kind = `email.${status}`;
    expect(observed.map((ev) => ev.type)).toEqual([kind as never]);
    expect(kindInfo(kind)).toBeDefined();
    const info = infoOf(kind as EventKind);
    expect(info.emits).not.toBeNull();
    expect(observed.map((ev) => ev.webhook)).toEqual([info.emits === 'webhook']);
    expect(sunk.map((ev) => ev.type)).toEqual(info.emits === 'webhook' ? [kind as never] : []);
    const after = await store.emails.get(TEAM, e.id);
    expect(after?.last_event).toBe(status);
    expect(after?.recipients['r@dest.test']).toBe(info.recipients ?? 'pending');
    // A stored row (all but the derived `email.queued`) is the kind the log reads back.
    const log = (await new Events().log(store, TEAM, e.id)).map((ev) => ev.type);
    expect(log).toEqual([kind as never]);
  });

  test('Events.unsubscribed: logged as catalogued, never sent', async () => {
    const e = email();
    const { observed, sunk } = await made((events) =>
      store.write(async (tx) => {
        tx.emails.put(e);
        await events.unsubscribed(tx, e);
      }),
    );
    expect(observed.map((ev) => ev.type)).toEqual(['email.unsubscribed']);
    expect(infoOf('email.unsubscribed').emits).toBe('log');
    expect(sunk).toEqual([]);
  });

  test('Events.other: the kinds src/ passes it are catalogued as sent to webhooks, and every such kind is passed', async () => {
    // Its parameter's type admits only these; here, what the code passes and what the catalogue claims.
    const passed = new Set<string>();
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else if (n.endsWith('.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/\.other\(\s*tx,\s*[^,]+,\s*'([a-z._]+)'/g)) passed.add(m[1] as string);
      }
    };
    walk(join(ROOT, 'src'));
    const others = EMITTED_WEBHOOK_KINDS.filter((k) => !infoOf(k).status);
    expect([...passed].sort()).toEqual([...others].sort());
    const { observed, sunk } = await made((events) =>
      store.write(async (tx) => {
        for (const k of others) await events.other(tx, TEAM, k as never, newId(), {}, { domain_id: newId() });
      }),
    );
    expect(observed.map((ev) => ev.type)).toEqual(others);
    expect(sunk.map((ev) => ev.type)).toEqual(others);
  });
});
