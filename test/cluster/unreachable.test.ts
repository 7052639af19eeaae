// Cluster mode with the database out of reach (README.md, "Cluster mode"): a node accepts nothing
// — the API answers 503 in the documented error shape, SMTP submission `451 4.3.0` at DATA (or
// `454 4.7.0` at AUTH when the key must be read), GET /health 503 so the load balancer looks
// elsewhere — and resumes by itself once the database is back: no restart, no mail lost.
import { describe, test, expect } from 'bun:test';
import { startPgServer } from '../helpers/postgres';
import { startPosthornSmtp, submitter } from '../helpers/smtp';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { verifiedDomain } from '../helpers/emails';
import { until } from '../helpers/wait';
import type { CachedRecords } from '../../src/store/cached';

describe('the database goes away under a running node', () => {
  test('503 / 451 / 454 while it is away, health says so, and sending resumes by itself after', async () => {
    const pg = await startPgServer();
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    // An attempt the outage cut short (its body could not be read) waits for its lease, the first
    // retry step: 2 s here.
    const s = await startPosthornSmtp({
      'database.url': await pg.database(),
      'dns.servers': [dns.address],
      'delivery.mx_port': sink.port,
      'security.allow_private_networks': true,
      'delivery.retry_schedule': '2s',
    });
    const { p } = s;
    try {
      await verifiedDomain(p, 'example.test', { dns });
      dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
      dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
      const mail = { from: 'a@example.test', to: 'r@dest.test', subject: 'hello', text: 'x' };
      const smtp = submitter(s.tls, p.apiKey, { secure: true });
      // Up: both ways in accept (and the key is now in the node's cache).
      expect((await p.api('POST', '/emails', { body: mail })).status).toBe(200);
      await smtp.sendMail(mail);

      pg.stop();
      const refused = await p.api('POST', '/emails', { body: mail });
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ statusCode: 503, name: 'service_unavailable', message: expect.stringContaining('database is unreachable') });
      expect(refused.headers.get('retry-after')).toBe('5');
      const health = await fetch(`${p.url}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: 'unavailable', database: 'unreachable' });
      // SMTP: the message is refused for now at the end of DATA (the client keeps it and retries)…
      const data = await smtp.sendMail(mail).then(
        () => null,
        (e: { responseCode?: number; response?: string }) => e,
      );
      expect(data?.responseCode).toBe(451);
      expect(data?.response).toStartWith('451 4.3.0');
      // …and a key that must be read from the database is a temporary AUTH failure, not a wrong password.
      (p.svc.store.apiKeys as unknown as CachedRecords<never, never>).clear();
      const auth = await submitter(s.tls, p.apiKey, { secure: true })
        .sendMail(mail)
        .then(
          () => null,
          (e: { responseCode?: number; response?: string }) => e,
        );
      expect(auth?.responseCode).toBe(454);
      expect(auth?.response).toStartWith('454 4.7.0');

      // Back: nothing to restart.
      await pg.start();
      await until(async () => (await fetch(`${p.url}/health`)).status === 200, 'the node to be healthy again');
      const again = await p.api('POST', '/emails', { body: mail });
      expect(again.status).toBe(200);
      await smtp.sendMail(mail);
      // Everything accepted is delivered: the two before the outage (one perhaps cut short by it) and the two after.
      await sink.waitFor(4, 30_000);
      await until(async () => (await p.api('GET', `/emails/${again.body.id}`)).body.last_event === 'delivered', 'the last email to be delivered');
    } finally {
      await s.stop();
      await sink.close();
      await dns.close();
      pg.destroy();
    }
  });
});
