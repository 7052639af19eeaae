// Chaos: a real `posthorn serve` child is killed with SIGKILL again and again while 8 clients send
// and mail is being delivered (the destination answers each message 150 ms late, so attempts are in
// flight when a kill lands) and a webhook endpoint fails the first request of a quarter of the
// events. After the last restart, every email that got a 200 is stored and delivered, and its
// email.sent and email.delivered events reach the endpoint. Delivery is at-least-once: a message whose 250 came
// back while the process died is sent again, so duplicates are counted, never lost mail.
// The delivery retry schedule is the default (first retry after 5 minutes): the attempts a kill cut
// short must be resumed when the service starts, not wait for their retry time.
// `POSTHORN_CHAOS_ROUNDS=20 npx bun test test/sending/chaos.test.ts` runs a longer storm.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { startReceiver } from '../helpers/receiver';
import { serveChild, verifiedDomain } from '../helpers/child';
import { until } from '../helpers/wait';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-chaos-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROUNDS = Number(process.env.POSTHORN_CHAOS_ROUNDS ?? 3);
const PER_ROUND = 40;

describe('chaos: repeated kill -9 during sends, deliveries and webhooks', () => {
  test('every acknowledged email is delivered and its events reach the endpoint', async () => {
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    sink.delayData(150);
    const receiver = await startReceiver();
    // A quarter of the events fail their first delivery and succeed on a retry.
    let hookEvents = 0;
    receiver.answer((_req, nth) => (nth === 1 && ++hookEvents % 4 === 0 ? { status: 500 } : { status: 200 }));
    const server = await serveChild(join(dir, 'data'), {
      POSTHORN_DNS_SERVERS: dns.address,
      POSTHORN_DELIVERY_MX_PORT: String(sink.port),
      POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
      POSTHORN_WEBHOOKS_RETRY_SCHEDULE: '1s,1s,1s',
    });
    try {
      await server.start();
      await verifiedDomain(server, dns.zone, 'chaos.test');
      expect((await server.api('POST', '/webhooks', { endpoint: receiver.url, events: ['email.sent', 'email.delivered'] })).status).toBe(201);

      const accepted: string[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        if (round > 1) await server.start();
        const target = accepted.length + PER_ROUND;
        const deliveredBefore = sink.messages.length;
        let killed = false;
        const worker = async (w: number) => {
          for (let i = 0; !killed; i++) {
            const body = JSON.stringify({ from: 'app@chaos.test', to: `r${round}-${w}-${i}@dest.test`, subject: `chaos ${round}-${w}-${i}`, text: 'hello' });
            const res = await fetch(`${server.base}/emails`, { method: 'POST', headers: server.headers, body }).catch(() => null);
            if (!res) return; // died under us: no answer means not accepted
            if (res.status === 200) accepted.push((await res.json()).id);
            // Killed once enough is accepted and deliveries of this round are under way.
            if (accepted.length >= target && sink.messages.length > deliveredBefore && !killed) {
              killed = true;
              server.process!.kill('SIGKILL');
            }
            await Bun.sleep(5);
          }
        };
        await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
        await server.process!.exited;
        expect(server.process!.signalCode).toBe('SIGKILL');
      }

      await server.start();
      const delivered = () => {
        const counts = new Map<string, number>();
        for (const m of sink.messages) {
          const id = /Message-ID: <([0-9a-f-]{36})@chaos\.test>/i.exec(m.raw.toString())?.[1];
          if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
        }
        return counts;
      };
      // Well inside the 5-minute first retry: interrupted attempts were resumed at start.
      await until(
        () => {
          const seen = delivered();
          return accepted.every((id) => seen.has(id));
        },
        `${accepted.length} deliveries`,
        120_000,
      );
      const counts = delivered();
      const duplicates = [...counts.values()].filter((n) => n > 1).length;
      console.log(`chaos: ${ROUNDS} kills, ${accepted.length} acknowledged emails delivered, ${duplicates} of them twice`);
      // At-least-once. A duplicate needs the kill to land between the destination taking a message
      // and Posthorn's commit of the 250 — for the sink here that includes its 150 ms delay, as an
      // MTA that commits before answering (RFC 1047). Per kill that is at most one message awaiting
      // its reply on each of the site's 20 connections, plus the outcomes whose reply came back but
      // whose commit was not yet flushed: the connection takes its next message meanwhile
      // (delivery/attempt.ts), so on a slow, loaded disk up to about as many again (a CI run saw
      // 64 in 3 kills). Re-sending what was already recorded would give hundreds.
      expect(duplicates).toBeLessThanOrEqual(ROUNDS * 40);

      // Every acknowledged email: stored, delivered, and both of its events delivered to the endpoint.
      const eventsOf = (type: string) =>
        new Set(
          receiver
            .delivered()
            .filter((h) => h.payload.type === type)
            .map((h) => h.payload.data.email_id as string),
        );
      await until(
        () => {
          const sent = eventsOf('email.sent');
          const done = eventsOf('email.delivered');
          return accepted.every((id) => sent.has(id) && done.has(id));
        },
        'webhook events of every acknowledged email',
        60_000,
      );
      for (const id of accepted.slice(0, 20)) expect((await server.api('GET', `/emails/${id}`)).body.last_event).toBe('delivered');
    } finally {
      await server.kill();
      await sink.close();
      await receiver.close();
      await dns.close();
    }
  }, 180_000);
});
