// Sending limits per team (docs/api.md §6.1): `limits.emails_per_day` and `limits.emails_per_hour`
// counted in the one sending core, so REST, batch, SMTP, broadcasts and automations all take from them; past a
// limit the send is refused whole with 429 `daily_quota_exceeded` / `hourly_quota_exceeded` (SMTP:
// 451 4.7.1 with the same text), nothing of it stored; the counts are durable across a restart and
// kept per team. Driven through the official SDK and nodemailer against a running server.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startPosthornSmtp, submitter, type RunningSmtp } from '../helpers/smtp';
import { verifiedDomain, storedEmails } from '../helpers/emails';
import { until } from '../helpers/wait';
import { sendBroadcast } from '../../src/broadcasts/send';
import { QuotaExceeded } from '../../src/limits/quota';

const mail = (to: string) => ({ from: 'hello@example.test', to, subject: `to ${to}`, text: 'limits' });
const tomorrow = () => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
};

describe('a daily limit (emails_per_day = 4)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-limits-'));
  let s: RunningSmtp;
  let p: Running;

  beforeAll(async () => {
    s = await startPosthornSmtp({ data_dir: dataDir, 'limits.emails_per_day': 4 });
    p = s.p;
    await verifiedDomain(p, 'example.test');
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test('REST and batch count; a batch that does not fit is refused whole, nothing stored', async () => {
    for (const to of ['a@dest.test', 'b@dest.test']) expect((await p.resend.emails.send(mail(to))).error).toBeNull();
    const over = await p.resend.batch.send([mail('c@dest.test'), mail('d@dest.test'), mail('e@dest.test')]);
    expect(over.data).toBeNull();
    expect(over.error).toMatchObject({
      statusCode: 429,
      name: 'daily_quota_exceeded',
      message: `You have reached your daily email sending quota of 4 emails per day (2 left, this request has 3 emails). It resets at ${tomorrow()}.`,
    });
    expect((await p.api('GET', '/emails?limit=100')).body.data).toHaveLength(2);
    const fits = await p.resend.batch.send([mail('c@dest.test'), mail('d@dest.test')]);
    expect(fits.error).toBeNull();
    expect(fits.data!.data).toHaveLength(2);
  });

  test('once reached: 429 with Retry-After until midnight UTC, and GET /usage shows the limit', async () => {
    const r = await p.api('POST', '/emails', { body: mail('f@dest.test') });
    expect(r.status).toBe(429);
    expect(r.body).toEqual({
      statusCode: 429,
      name: 'daily_quota_exceeded',
      message: `You have reached your daily email sending quota of 4 emails per day. It resets at ${tomorrow()}.`,
    });
    const wait = Number(r.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(86_400);
    expect((await p.resend.emails.send({ ...mail('g@dest.test'), scheduledAt: 'in 1 hour' })).error?.name).toBe('daily_quota_exceeded');
    const usage = (await p.api('GET', '/usage')).body;
    expect(usage.emails.daily.limit).toBe(4);
    expect(usage.emails.monthly.limit).toBeNull();
  });

  test('SMTP submission is refused with 451 4.7.1 and the same text', async () => {
    const err = await submitter(s.starttls, p.apiKey)
      .sendMail(mail('h@dest.test'))
      .then(
        () => null,
        (e) => e as { responseCode?: number; response?: string },
      );
    expect(err?.responseCode).toBe(451);
    expect(err?.response).toContain('4.7.1 You have reached your daily email sending quota of 4 emails per day.');
  });

  test('each team has its own count', async () => {
    const other = await p.newTeam();
    await verifiedDomain(p, 'other.test', { key: other.api_key, team: other.team_id });
    expect((await p.client(other.api_key).emails.send({ ...mail('i@dest.test'), from: 'hi@other.test' })).error).toBeNull();
  });

  test('the count is durable: after a restart the team is still at its limit', async () => {
    const key = p.apiKey;
    await s.stop();
    const again = await startPosthorn({ data_dir: dataDir, 'limits.emails_per_day': 4 });
    try {
      expect((await again.client(key).emails.send(mail('j@dest.test'))).error?.name).toBe('daily_quota_exceeded');
    } finally {
      await again.stop();
    }
  });
});

describe('an hourly limit (emails_per_hour = 2)', () => {
  let p: Running;
  beforeAll(async () => {
    p = await startPosthorn({ 'limits.emails_per_hour': 2 });
    await verifiedDomain(p, 'example.test');
  });
  afterAll(() => p.stop());

  test('the third email of the hour is refused: 429 hourly_quota_exceeded', async () => {
    expect((await p.resend.emails.send(mail('a@dest.test'))).error).toBeNull();
    expect((await p.resend.emails.send(mail('b@dest.test'))).error).toBeNull();
    const d = new Date();
    const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1)).toISOString();
    expect((await p.resend.emails.send(mail('c@dest.test'))).error).toEqual({
      statusCode: 429,
      name: 'hourly_quota_exceeded',
      message: `You have reached your hourly email sending quota of 2 emails per hour. It resets at ${next}.`,
    } as never);
  });

  test('a broadcast counts too: it stays queued, its emails not made, until the period ends', async () => {
    const team = p.creds.team_id;
    const seg = (await p.api('POST', '/segments', { body: { name: 'All' } })).body.id;
    for (const email of ['x@dest.test', 'y@dest.test']) expect((await p.api('POST', '/contacts', { body: { email, segments: [seg] } })).status).toBe(201);
    const { data, error } = await p.resend.broadcasts.create({ segmentId: seg, from: 'news@example.test', subject: 'News', text: 'news', send: true });
    expect(error).toBeNull();
    await p.svc.broadcasts.idle();
    expect((await p.svc.store.broadcasts.get(team, data!.id))!.status).toBe('queued');
    expect((await storedEmails(p.svc, team)).filter((e) => e.broadcast_id === data!.id)).toEqual([]);
    // Straight through the sending core: the same refusal, as a QuotaExceeded the runner waits on.
    await expect(sendBroadcast(p.svc, team, data!.id)).rejects.toBeInstanceOf(QuotaExceeded);
  });

  test('an automation counts too: its run waits at the email step until the period ends, not failed', async () => {
    const team = p.creds.team_id;
    const tpl = await p.resend.templates.create({ name: 'welcome', from: 'hello@example.test', subject: 'Welcome', html: '<p>Hi</p>' } as never).publish();
    expect(tpl.error).toBeNull();
    expect((await p.resend.events.create({ name: 'signed.up', schema: null })).error).toBeNull();
    const auto = await p.resend.automations.create({
      name: 'welcome',
      status: 'enabled',
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: 'signed.up' } },
        { key: 'welcome', type: 'send_email', config: { template: { id: tpl.data!.id, variables: {} } } },
      ],
      connections: [{ from: 'start', to: 'welcome' }],
    } as never);
    expect(auto.error).toBeNull();
    expect((await p.resend.events.send({ event: 'signed.up', email: 'zed@dest.test', payload: {} } as never)).error).toBeNull();
    const d = new Date();
    const nextHour = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
    await until(
      async () => (await p.svc.store.automationRuns.all(team)).some((r) => r.at === 'welcome' && (r.due ?? 0) >= nextHour),
      'the run to wait for the next hour',
    );
    const [run] = await p.svc.store.automationRuns.all(team);
    expect(run).toMatchObject({ status: 'running', at: 'welcome', attempts: 0 });
    expect((await storedEmails(p.svc, team)).filter((e) => e.contact_id)).toEqual([]);
  });
});
