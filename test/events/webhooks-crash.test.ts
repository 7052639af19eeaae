// Accepted means durable, for webhooks too (docs/ARCHITECTURE.md): a real `posthorn serve` child commits a
// burst of contact updates while its webhook endpoint holds every request unanswered, so all their
// events are in the outbox (queued or mid-attempt) when the child is killed with SIGKILL. After a
// restart on the same data dir, every event of every update that got a 200 reaches the receiver,
// attempts cut short by the kill are retried under the same svix-id, and no update has two events.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as SvixWebhook } from 'svix';
import { startReceiver } from '../helpers/receiver';
import { serveChild } from '../helpers/child';
import { until } from '../helpers/wait';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-webhook-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kill -9 with webhook events outstanding', () => {
  test('every event of an acknowledged change is delivered after restart', async () => {
    const receiver = await startReceiver();
    const server = await serveChild(join(dir, 'data'), {
      POSTHORN_DNS_SERVERS: '127.0.0.1:9',
      POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
      POSTHORN_WEBHOOKS_RETRY_SCHEDULE: '1s',
    });
    const { base, headers, api } = server;

    try {
      await server.start();
      const hook = await api('POST', '/webhooks', { endpoint: receiver.url, events: ['contact.updated'] });
      expect(hook.status).toBe(201);
      const secret = hook.body.signing_secret as string;
      const contact = await api('POST', '/contacts', { email: 'crash@people.test' });
      expect(contact.status).toBe(201);

      // The endpoint takes requests but never answers: every event stays outstanding.
      receiver.answer(() => ({ hold: true }));
      const accepted: string[] = [];
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const name = `n-${w}-${i}`;
          const res = await fetch(`${base}/contacts/${contact.body.id}`, { method: 'PATCH', headers, body: JSON.stringify({ first_name: name }) }).catch(
            () => null,
          );
          if (!res) return; // the server died under us: no answer means not accepted
          if (res.status === 200) accepted.push(name);
          // Killed once some attempts are in flight at the endpoint and many events are queued.
          if (accepted.length >= 60 && receiver.requests.length > 0 && !killed) {
            killed = true;
            server.process!.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
      await server.process!.exited;
      expect(server.process!.signalCode).toBe('SIGKILL');
      const cutShort = new Set(receiver.requests.map((h) => h.id));
      expect(cutShort.size).toBeGreaterThan(0); // some attempts were in flight when the kill landed

      // Restart; the endpoint answers from now on.
      // (Requests held before the kill stay unanswered: their connections died with the child.)
      receiver.answer(() => ({ status: 200 }));
      await server.start();
      const names = () => receiver.delivered().map((h) => h.payload.data.first_name as string);
      await until(
        () => {
          const seen = names();
          return accepted.every((n) => seen.includes(n));
        },
        `${accepted.length} webhook deliveries`,
        60_000,
      );

      // One event per update (de-duplicated on svix-id), each verifiable; the interrupted
      // attempts came again under their own ids.
      const delivered = receiver.delivered();
      const perName = new Map<string, number>();
      for (const h of delivered) {
        const name = h.payload.data.first_name as string;
        perName.set(name, (perName.get(name) ?? 0) + 1);
      }
      expect([...perName.values()].every((n) => n === 1)).toBe(true);
      for (const id of cutShort) expect(delivered.some((h) => h.id === id)).toBe(true);
      for (const h of delivered) expect(new SvixWebhook(secret).verify(h.body, h.headers)).toBeTruthy();
      // Every page of the endpoint's events (however many updates were accepted before the kill).
      const listed: { id: string; status: string }[] = [];
      for (let after = ''; ; ) {
        const page = await api('GET', `/webhooks/${hook.body.id}/events?limit=100${after ? `&after=${after}` : ''}`);
        listed.push(...page.body.data);
        if (!page.body.has_more) break;
        after = page.body.data.at(-1).id;
      }
      expect(listed.filter((e) => e.status === 'success').length).toBeGreaterThanOrEqual(accepted.length);
    } finally {
      await server.kill();
      await receiver.close();
    }
  });
});
