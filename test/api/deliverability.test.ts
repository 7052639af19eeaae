// Deliverability on the API (Posthorn): GET /deliverability/incidents (docs/api.md §19.9) — newest
// first, open or closed by the time of the last reply, paginated, one team's — and
// POST /suppressions/lift (docs/api.md §16.1) — the bounce entries an incident, a class under the
// rules in force, or a reply caused, lifted in one call or listed first (`dry_run`); complaints and
// entries added by hand never; bad requests refused changing nothing. Records are written to the
// store as the delivery engine and the inbound processor write them.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { newId, uuidAt } from '../../src/ids';
import { INCIDENT_QUIET_MS } from '../../src/delivery/incidents';
import type { EmailRec, IncidentRec, SuppressionRec } from '../../src/store';

let p: Running;
let team: string;
const HOUR = 3_600_000;

beforeAll(async () => {
  p = await startPosthorn();
  team = p.creds.team_id;
});
afterAll(() => p.stop());

/** An incident as the engine records it, its first reply at `at`. */
function incident(at: number, over: Partial<IncidentRec> = {}, t = team): IncidentRec {
  return {
    id: uuidAt(at),
    team_id: t,
    created_at: new Date(at).toISOString(),
    class: 'reputation',
    site: 'google',
    latest: true,
    last_seen_at: new Date(at).toISOString(),
    count: 1,
    reply: '550 5.7.1 … very low reputation of the sending IP address. https://support.google.com/mail/answer/188131',
    last_reply: '550 5.7.1 … very low reputation of the sending IP address.',
    code: 550,
    enhanced_code: '5.7.1',
    remote_host: 'gmail-smtp-in.l.google.com',
    remote_ip: '198.51.100.27',
    sending_ip: '192.0.2.25',
    domain: 'example.test',
    email_id: newId(),
    links: ['https://support.google.com/mail/answer/188131'],
    suspended_until: new Date(at + 60_000).toISOString(),
    ...over,
  };
}

describe('GET /deliverability/incidents', () => {
  test('newest first with the incident’s fields; open until its site has been quiet for 24 hours; paginated; one team’s', async () => {
    const now = Date.now();
    const closed = incident(now - 3 * INCIDENT_QUIET_MS, { latest: false, last_seen_at: new Date(now - 2 * INCIDENT_QUIET_MS).toISOString(), count: 40 });
    const auth = incident(now - 2 * HOUR, {
      class: 'authentication',
      site: 'microsoft',
      reply: '550 5.7.515 Access denied',
      last_reply: '550 5.7.515 Access denied',
    });
    const open = incident(now - HOUR, { last_seen_at: new Date(now - 60_000).toISOString(), count: 7 });
    const stranger = await p.newTeam();
    await p.svc.store.write(async (tx) => {
      for (const r of [closed, auth, open, incident(now, {}, stranger.team_id)]) tx.incidents.put(r);
    });

    const all = await p.api('GET', '/deliverability/incidents');
    expect(all.status).toBe(200);
    expect(all.body.data.map((i: { id: string }) => i.id)).toEqual([open.id, auth.id, closed.id]);
    expect(all.body.data[0]).toEqual({
      object: 'incident',
      id: open.id,
      kind: 'reply',
      listing: null,
      class: 'reputation',
      site: 'google',
      status: 'open',
      created_at: open.created_at,
      last_seen_at: open.last_seen_at,
      closed_at: null,
      count: 7,
      reply: open.reply,
      last_reply: open.last_reply,
      code: 550,
      enhanced_code: '5.7.1',
      remote_host: 'gmail-smtp-in.l.google.com',
      remote_ip: '198.51.100.27',
      sending_ip: '192.0.2.25',
      domain: 'example.test',
      email_id: open.email_id,
      links: ['https://support.google.com/mail/answer/188131'],
      suspended_until: open.suspended_until,
    });
    expect(all.body.data[2]).toMatchObject({ status: 'closed', closed_at: new Date(Date.parse(closed.last_seen_at) + INCIDENT_QUIET_MS).toISOString() });

    expect((await p.api('GET', '/deliverability/incidents?status=open')).body.data.map((i: { id: string }) => i.id)).toEqual([open.id, auth.id]);
    expect((await p.api('GET', '/deliverability/incidents?status=closed')).body.data.map((i: { id: string }) => i.id)).toEqual([closed.id]);
    const first = await p.api('GET', '/deliverability/incidents?limit=2');
    expect(first.body).toMatchObject({ has_more: true });
    expect(first.body.data.map((i: { id: string }) => i.id)).toEqual([open.id, auth.id]);
    const next = await p.api('GET', `/deliverability/incidents?limit=2&after=${auth.id}`);
    expect(next.body).toMatchObject({ has_more: false });
    expect(next.body.data.map((i: { id: string }) => i.id)).toEqual([closed.id]);
    // Another team sees only its own.
    expect((await p.api('GET', '/deliverability/incidents', { key: stranger.api_key })).body.data).toHaveLength(1);
  });

  test('bad queries are refused', async () => {
    expect((await p.api('GET', '/deliverability/incidents?status=maybe')).status).toBe(422);
    expect((await p.api('GET', '/deliverability/incidents?limit=0')).status).toBe(422);
    expect((await p.api('GET', '/deliverability/incidents?after=nope')).status).toBe(422);
    expect((await p.api('GET', '/deliverability/incidents', { key: null })).status).toBe(401);
  });
});

describe('POST /suppressions/lift', () => {
  /** A team of its own per test, so each counts only its entries. */
  async function seeded() {
    const t = await p.newTeam();
    const at = (ms: number) => new Date(ms).toISOString();
    const now = Date.now();
    const email = (id: string, rcpt: string, reply: string): EmailRec =>
      ({
        id,
        team_id: t.team_id,
        created_at: at(now - 5 * HOUR),
        recipients: { [rcpt]: 'bounced' },
        attempts: [
          { at: at(now - 5 * HOUR), domain: 'x.test', host: 'mx.x.test', tls: true, duration_ms: 1, results: [{ recipient: rcpt, code: 550, reply }] },
        ],
      }) as unknown as EmailRec;
    const entry = (email: string, ms: number, over: Partial<SuppressionRec>): SuppressionRec => ({
      id: uuidAt(ms),
      team_id: t.team_id,
      created_at: at(ms),
      email,
      origin: 'bounce',
      source_id: null,
      ...over,
    });
    // An incident at Google from 4 h to 2 h ago.
    const inc = incident(now - 4 * HOUR, { team_id: t.team_id, last_seen_at: at(now - 2 * HOUR) }, t.team_id);
    const oldEmailId = uuidAt(now - 5 * HOUR);
    const entries = {
      // Made by an earlier version, which suppressed every permanent bounce: no class, no reply; the email says why.
      legacy: entry('legacy@x.test', now - 5 * HOUR, { source_id: oldEmailId }),
      // Made during the incident, at its site, by rules that read a block list as a recipient.
      during: entry('during@gmail.test', now - 3 * HOUR, { class: 'recipient', reply: '550 5.7.1 blocked using zen.spamhaus.org', site: 'google' }),
      // Same time, another site.
      elsewhere: entry('elsewhere@x.test', now - 3 * HOUR + 1, { class: 'recipient', reply: '550 5.1.1 user unknown', site: 'x.test' }),
      // A genuine unknown user, after the incident.
      unknown: entry('unknown@gmail.test', now - HOUR, {
        class: 'recipient',
        reply: '550 5.1.1 The email account that you tried to reach does not exist',
        site: 'google',
      }),
      complaint: entry('complaint@x.test', now - 3 * HOUR + 2, { origin: 'complaint' }),
      manual: entry('manual@x.test', now - 3 * HOUR + 3, { origin: 'manual' }),
    };
    await p.svc.store.write(async (tx) => {
      tx.emails.put(email(oldEmailId, 'legacy@x.test', '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using Barracuda Reputation'));
      tx.incidents.put(inc);
      for (const e of Object.values(entries)) tx.suppressions.put(e);
    });
    const left = async () => (await p.svc.store.suppressions.all(t.team_id)).map((s) => s.email).sort();
    const lift = (body: unknown) => p.api('POST', '/suppressions/lift', { body, key: t.api_key });
    return { t, inc, entries, left, lift };
  }

  test('by class under the rules in force: entries of earlier versions and earlier rules, the legacy one read from its email', async () => {
    const { entries, left, lift } = await seeded();
    const dry = await lift({ class: ['reputation', 'authentication', 'policy'], dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ object: 'suppression_lift', dry_run: true, lifted: 2, has_more: false });
    expect(dry.body.data.map((s: { email: string }) => s.email)).toEqual(['legacy@x.test', 'during@gmail.test']);
    expect(dry.body.data[1]).toMatchObject({ id: entries.during.id, class: 'recipient', reply: '550 5.7.1 blocked using zen.spamhaus.org' });
    expect((await left()).length).toBe(6); // a dry run lifts nothing
    const done = await lift({ class: 'reputation' });
    expect(done.body).toMatchObject({ dry_run: false, lifted: 2 });
    expect(await left()).toEqual(['complaint@x.test', 'elsewhere@x.test', 'manual@x.test', 'unknown@gmail.test']);
  });

  test('by incident: bounce entries made while it lasted at its site; never complaints or manual entries', async () => {
    const { inc, left, lift } = await seeded();
    const r = await lift({ incident_id: inc.id });
    expect(r.status).toBe(200);
    expect(r.body.data.map((s: { email: string }) => s.email)).toEqual(['during@gmail.test']);
    expect(await left()).toEqual(['complaint@x.test', 'elsewhere@x.test', 'legacy@x.test', 'manual@x.test', 'unknown@gmail.test']);
  });

  test('by reply text and time', async () => {
    const { entries, left, lift } = await seeded();
    expect((await lift({ reply_contains: 'USER UNKNOWN', dry_run: true })).body.data.map((s: { email: string }) => s.email)).toEqual(['elsewhere@x.test']);
    const r = await lift({
      reply_contains: 'spamhaus',
      since: entries.during.created_at,
      until: new Date(Date.parse(entries.during.created_at) + 1).toISOString(),
    });
    expect(r.body.lifted).toBe(1);
    expect(await left()).not.toContain('during@gmail.test');
  });

  test('bad requests are refused and change nothing', async () => {
    const { left, lift } = await seeded();
    const before = await left();
    const cases: [unknown, number, string][] = [
      [{}, 422, 'missing_required_field'],
      [{ since: '2026-01-01T00:00:00Z' }, 422, 'missing_required_field'],
      [{ class: 'spam' }, 422, 'validation_error'],
      [{ class: ['reputation', 'nope'] }, 422, 'validation_error'],
      [{ reply_contains: '   ' }, 422, 'validation_error'],
      [{ class: 'reputation', since: 'yesterday' }, 422, 'validation_error'],
      [{ incident_id: 'abc' }, 422, 'validation_error'],
      [{ incident_id: newId() }, 404, 'not_found'],
      [{ class: 'reputation', dry_run: 'yes' }, 422, 'validation_error'],
    ];
    for (const [body, status, name] of cases) {
      const r = await lift(body);
      expect({ body, status: r.status, name: r.body.name }).toEqual({ body, status, name });
    }
    expect(await left()).toEqual(before);
  });
});
