// GET /usage (docs/api.md §21) through `resend.usage.get()`: a team's emails sent and received today
// and this month read from the metric counters (never the emails: deleting one changes nothing),
// its contacts, segments, broadcasts and domains, its request limit; the UTC day and month
// boundaries; one team never sees another's; refused for a sending-only key.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { mta, inboundProcessed } from '../helpers/smtp';
import { verifiedDomain, waitForEmail } from '../helpers/emails';
import { teamUsage } from '../../src/analytics/usage';
import { newId } from '../../src/ids';
import type { Running } from '../helpers/posthorn';

let world: MailWorld;
let p: Running;

beforeAll(async () => {
  world = await startMailWorld({}, { smtp: true });
  p = world.p;
});
afterAll(() => world.stop());

const zero = (resetsDay: string, resetsMonth: string) => ({
  object: 'usage',
  generated_at: expect.stringMatching(/Z$/),
  emails: {
    daily: { used: 0, limit: null, sent: 0, received: 0, resets_at: resetsDay },
    monthly: { used: 0, limit: null, sent: 0, received: 0, resets_at: resetsMonth },
  },
  contacts: { used: 0, limit: null },
  segments: { used: 0, limit: null },
  broadcasts: { used: 0, limit: null },
  ai_credits: { used: 0, limit: null, next_increase_at: null },
  automation_runs: { used: 0, limit: null, resets_at: resetsMonth },
  domains: { used: 0, limit: null },
  rate_limit: { limit: 1000, duration: '1000ms' }, // the test install's limits.requests_per_second
});

function boundaries(now = Date.now()) {
  const d = new Date(now);
  return {
    day: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString(),
    month: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString(),
  };
}

describe('resend.usage.get', () => {
  test('a new team: nothing used, no caps, its request limit', async () => {
    const team = await p.newTeam();
    const { data, error } = await p.client(team.api_key).usage.get();
    expect(error).toBeNull();
    const b = boundaries();
    expect(data).toEqual(zero(b.day, b.month) as never);
  });

  test('counts what the team did, from the counters; other teams see none of it', async () => {
    const team = await p.newTeam();
    const resend = p.client(team.api_key);
    const domain = await verifiedDomain(p, `usage-${process.pid}.test`, { dns: world.dns, key: team.api_key, team: team.team_id });
    const inbound = `in-${process.pid}.test`;
    expect((await resend.domains.create({ name: inbound, capabilities: { sending: 'disabled', receiving: 'enabled' } })).error).toBeNull();

    const ids: string[] = [];
    for (const to of ['ann@dest.test', 'bob@dest.test']) {
      const { data, error } = await resend.emails.send({ from: `hello@${domain.name}`, to, subject: 'Usage', text: 'counted' });
      expect(error).toBeNull();
      ids.push(data!.id);
    }
    // A scheduled email is not sent yet: not counted.
    await resend.emails.send({ from: `hello@${domain.name}`, to: 'cy@dest.test', subject: 'Later', text: 'x', scheduledAt: 'in 1 day' });
    for (const id of ids) await waitForEmail(p.svc, { team_id: team.team_id, id }, (e) => e.last_event === 'delivered');

    const t = mta(world.smtp!.starttls);
    try {
      await t.sendMail({
        envelope: { from: 'dan@sender.test', to: [`support@${inbound}`] },
        from: 'dan@sender.test',
        to: `support@${inbound}`,
        subject: 'Hi',
        text: 'in',
      } as never);
    } finally {
      t.close();
    }
    // Answered 250 once spooled; counted once the processor has stored it.
    await inboundProcessed(p);
    for (const email of ['a@dest.test', 'b@dest.test']) await resend.contacts.create({ email });
    const segment = (await resend.segments.create({ name: 'S' })).data!.id;
    await resend.broadcasts.create({ segmentId: segment, from: `hello@${domain.name}`, subject: 'News', html: '<p>x</p>' });

    const { data, error } = await resend.usage.get();
    expect(error).toBeNull();
    expect(data!.emails.daily).toMatchObject({ used: 3, sent: 2, received: 1, limit: null });
    expect(data!.emails.monthly).toMatchObject({ used: 3, sent: 2, received: 1, limit: null });
    expect(data).toMatchObject({ contacts: { used: 2 }, segments: { used: 1 }, broadcasts: { used: 1 }, domains: { used: 2 } });

    // Counters, not emails: an email that leaves the store (retention) stays counted.
    await p.svc.store.write(async (tx) => tx.emails.remove(team.team_id, ids[0]));
    expect((await resend.usage.get()).data!.emails.daily.sent).toBe(2);

    // Another team's usage is its own.
    const other = await p.newTeam();
    const b = boundaries();
    expect((await p.client(other.api_key).usage.get()).data).toEqual(zero(b.day, b.month) as never);
  });

  test('refused without a full-access key; only GET', async () => {
    const key = await p.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
    expect((await p.client(key.data!.token).usage.get()).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
    expect((await p.api('GET', '/usage', { key: null })).body).toMatchObject({ statusCode: 401, name: 'missing_api_key' });
    expect((await p.api('POST', '/usage', { body: {} })).body).toMatchObject({ statusCode: 405, name: 'method_not_allowed' });
  });
});

describe('periods (UTC)', () => {
  test('today counts from midnight, this month from the 1st; earlier counters do not count', async () => {
    const team = newId();
    const now = Date.UTC(2026, 4, 15, 10, 30); // 15 May 2026, 10:30 UTC
    const dims = { domain_id: newId(), broadcast_id: null, email_id: newId() };
    await p.svc.store.write(async (tx) => {
      tx.metrics.add(team, Date.UTC(2026, 4, 15, 0, 5), dims, { sent: 1 }); // today
      tx.metrics.add(team, Date.UTC(2026, 4, 15, 10, 1), dims, { sent: 2, received: 1, delivered: 3 }); // today, this hour
      tx.metrics.add(team, Date.UTC(2026, 4, 14, 23, 59), dims, { sent: 4 }); // yesterday
      tx.metrics.add(team, Date.UTC(2026, 4, 1, 0, 0), dims, { received: 8 }); // the 1st
      tx.metrics.add(team, Date.UTC(2026, 3, 30, 23, 59), dims, { sent: 16 }); // last month
    });
    const u = await teamUsage(p.svc.store, team, { requestsPerSecond: 7, now });
    expect(u.emails.daily).toEqual({ used: 4, limit: null, sent: 3, received: 1, resets_at: '2026-05-16T00:00:00.000Z' });
    expect(u.emails.monthly).toEqual({ used: 16, limit: null, sent: 7, received: 9, resets_at: '2026-06-01T00:00:00.000Z' });
    expect(u.rate_limit).toEqual({ limit: 7, duration: '1000ms' });
    expect(u.generated_at).toBe('2026-05-15T10:30:00.000Z');
    // December rolls over into January.
    const dec = await teamUsage(p.svc.store, team, { requestsPerSecond: 7, now: Date.UTC(2026, 11, 31, 23) });
    expect([dec.emails.daily.resets_at, dec.emails.monthly.resets_at]).toEqual(['2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });
});
