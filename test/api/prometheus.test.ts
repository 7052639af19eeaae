// GET /metrics (README "Monitoring"): Prometheus text behind `metrics.token`; off (404) without a
// token; the figures move with real traffic — an accepted email, its delivery, a webhook backlog,
// an open SMTP session, request latency.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startPosthorn } from '../helpers/posthorn';
import { SmtpDialog } from '../helpers/smtp';
import { until } from '../helpers/wait';

let w: MailWorld;
const TOKEN = 'metrics-token-for-tests';

const scrape = (token: string | null) => fetch(`${w.p.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

/** The value of one sample line (`name{labels} value`). */
function sample(text: string, line: string): number | null {
  const m = new RegExp(`^${line.replace(/[{}()|.*+?^$[\]\\]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

beforeAll(async () => {
  w = await startMailWorld({ 'metrics.token': TOKEN, 'security.allow_private_networks': true }, { smtp: true });
  w.p.svc.telemetry.smtpSessions = () => w.smtp!.smtp.sessions();
});
afterAll(() => w.stop());

describe('GET /metrics', () => {
  test('without the token, or with a wrong one: 401 in the error shape', async () => {
    for (const t of [null, 'wrong']) {
      const res = await scrape(t);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ statusCode: 401, name: 'missing_api_key' });
    }
    // An API key is not the metrics token.
    expect((await scrape(w.p.apiKey)).status).toBe(401);
  });

  test('with the token: Prometheus text whose figures follow the traffic', async () => {
    const first = await (await scrape(TOKEN)).text();
    const accepted0 = sample(first, 'posthorn_emails_accepted_total') ?? 0;
    const delivered0 = sample(first, 'posthorn_deliveries_total{result="delivered"}') ?? 0;

    // A webhook endpoint that never answers keeps its messages in the backlog.
    const hook = await w.p.resend.webhooks.create({ endpoint: 'http://127.0.0.1:9/never', events: ['email.delivered'] });
    expect(hook.error).toBeNull();
    const sent = await w.p.resend.emails.send({ from: 'a@example.test', to: 'b@dest.test', subject: 'm', text: 'x' });
    expect(sent.error).toBeNull();
    await w.sink.waitFor(1);
    const dialog = await SmtpDialog.open(w.smtp!.starttls);

    let text = '';
    // Delivery on a loaded machine can take a few seconds.
    await until(
      async () => {
        const res = await scrape(TOKEN);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toStartWith('text/plain');
        text = await res.text();
        return (sample(text, 'posthorn_deliveries_total{result="delivered"}') ?? 0) > delivered0 && (sample(text, 'posthorn_webhook_backlog') ?? 0) >= 1;
      },
      () => `the delivery and its webhook in the metrics; last scrape:\n${text}`,
      20_000,
    );
    expect(sample(text, 'posthorn_emails_accepted_total')).toBe(accepted0 + 1);
    expect(sample(text, 'posthorn_deliveries_total{result="delivered"}')).toBe(delivered0 + 1);
    expect(sample(text, 'posthorn_email_events_total{type="sent"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'posthorn_webhook_backlog')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'posthorn_smtp_sessions')).toBe(1);
    expect(sample(text, 'posthorn_inbound_spool{state="waiting"}')).toBe(0);
    expect(sample(text, 'posthorn_inbound_spool{state="failed"}')).toBe(0);
    expect(sample(text, 'posthorn_incoming_requests')).toBe(0);
    expect(sample(text, 'posthorn_queue_entries{state="ready"}')).toBe(0);
    expect(sample(text, 'posthorn_queue_oldest_age_seconds')).toBe(0);
    expect(text).toMatch(/^posthorn_http_request_duration_seconds_bucket\{le="\+Inf",method="POST",status="200"\} [1-9]/m);
    expect(text).toContain('# TYPE posthorn_http_request_duration_seconds histogram');
    await dialog.close();
  });
});

test('no token configured: the endpoint is off (404)', async () => {
  const p = await startPosthorn();
  try {
    const res = await fetch(`${p.url}/metrics`, { headers: { authorization: 'Bearer anything' } });
    expect(res.status).toBe(404);
    expect((await res.json()).name).toBe('not_found');
  } finally {
    await p.stop();
  }
});
