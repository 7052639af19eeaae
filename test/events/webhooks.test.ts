// Webhook building blocks: event ids (Svix format, time-ordered), signatures (checked against the
// svix package's own signer), and a single attempt's outcome for a slow or chatty endpoint.
import { describe, test, expect, afterAll } from 'bun:test';
import { Webhook as SvixWebhook } from 'svix';
import { newMsgId, isMsgId, newSigningSecret, sign, signedHeaders } from '../../src/events/webhooks/signing';
import { deliver } from '../../src/events/webhooks/deliver';
import type { WebhookEventRec, WebhookRec } from '../../src/store';
import { startReceiver, type Receiver } from '../helpers/receiver';

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

describe('event ids', () => {
  test('msg_ + 27 base62 chars, strictly increasing in creation order', () => {
    const ids = Array.from({ length: 2000 }, () => newMsgId());
    for (const id of ids) expect(id).toMatch(/^msg_[0-9A-Za-z]{27}$/);
    expect(ids.every(isMsgId)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(isMsgId('msg_short')).toBe(false);
    expect(isMsgId('0195608a-51e4-70ed-a079-d3bde8e25d94')).toBe(false);
  });
});

describe('signatures', () => {
  test('match the svix signer; both headers families carry them', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const id = newMsgId();
    const ts = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'email.sent', created_at: new Date().toISOString(), data: { é: '✓' } });
    expect(sign(secret, id, ts, body)).toBe(new SvixWebhook(secret).sign(id, new Date(ts * 1000), body));
    const other = newSigningSecret();
    const h = signedHeaders([secret, other], id, ts, body);
    expect(h['svix-signature']).toBe(`${sign(secret, id, ts, body)} ${sign(other, id, ts, body)}`);
    expect(h['webhook-signature']).toBe(h['svix-signature']);
    expect(h['webhook-id']).toBe(id);
    expect(h['webhook-timestamp']).toBe(String(ts));
    expect(new SvixWebhook(other).verify(body, h)).toEqual(JSON.parse(body));
  });
});

describe('one attempt', () => {
  const webhook = (endpoint: string): WebhookRec => ({
    id: '0195608a-51e4-70ed-a079-d3bde8e25d94',
    team_id: 't',
    created_at: new Date().toISOString(),
    endpoint,
    events: ['email.sent'],
    status: 'enabled',
    signing_secret: newSigningSecret(),
    previous_secret: null,
    previous_secret_expires_at: null,
  });
  const event: WebhookEventRec = {
    id: newMsgId(),
    team_id: 't',
    created_at: new Date().toISOString(),
    webhook_id: '0195608a-51e4-70ed-a079-d3bde8e25d94',
    event_id: 'e',
    type: 'email.sent',
    status: 'pending',
    attempts: 0,
    due: null,
    replay: false,
    payload: { type: 'email.sent', created_at: new Date().toISOString(), data: { email_id: 'x' } },
  };

  test('an endpoint that does not answer in time → `timeout`, no status code', async () => {
    const r = await startReceiver();
    receivers.push(r);
    r.answer(() => ({ hold: true }));
    const out = await deliver(webhook(r.url), event, { allowPrivate: true, timeoutMs: 300 });
    expect(out).toMatchObject({ ok: false, http_status_code: null, response: 'timeout' });
    expect(out.error).toContain('timeout');
    expect(r.requests.length).toBe(1);
  });

  test('a long answer is kept to its first 2 KB; the body sent is the exact signed envelope', async () => {
    const r = await startReceiver();
    receivers.push(r);
    r.answer(() => ({ status: 201, body: 'é'.repeat(3000) }));
    const w = webhook(r.url);
    const out = await deliver(w, event, { allowPrivate: true });
    expect(out.ok).toBe(true);
    expect(out.http_status_code).toBe(201);
    expect(Buffer.byteLength(out.response)).toBe(2048);
    const [h] = r.requests;
    expect(h.body).toBe(JSON.stringify(event.payload));
    expect(new SvixWebhook(w.signing_secret).verify(h.body, h.headers)).toEqual(event.payload);
  });

  test('a private endpoint is refused before connecting unless allowed', async () => {
    const r = await startReceiver();
    receivers.push(r);
    const out = await deliver(webhook(r.url), event, { allowPrivate: false });
    expect(out).toMatchObject({ ok: false, http_status_code: null, response: 'refused: private or loopback address' });
    expect(r.requests.length).toBe(0);
  });
});
