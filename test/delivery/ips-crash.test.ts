// Kill -9 while sending through several addresses loses nothing (docs/ARCHITECTURE.md, "Rules of
// the house"; README.md, "Sending IPs and warm-up"): a `posthorn serve` child delivers through a
// pool of three loopback addresses to a slow sink and is killed with SIGKILL mid-delivery. After a
// restart every accepted email is delivered — from the pool's addresses only; an attempt the kill
// cut off after the sink's 250 may arrive twice (at least once, as with any MTA).
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { serveChild, verifiedDomain } from '../helpers/child';
import { until } from '../helpers/wait';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-ips-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const POOL = ['127.0.0.3', '127.0.0.4', '127.0.0.5'];

describe('kill -9 while sending through a pool', () => {
  test('every accepted email is delivered after restart, from the pool only', async () => {
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    const server = await serveChild(join(dir, 'data'), {
      POSTHORN_DNS_SERVERS: dns.address,
      POSTHORN_DELIVERY_MX_PORT: String(sink.port),
      POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
      POSTHORN_DELIVERY_RETRY_SCHEDULE: '1s',
      POSTHORN_DELIVERY_IPS: JSON.stringify(POOL.map((address, i) => ({ address, ehlo: `mta${i}.crash.test` }))),
    });
    try {
      await server.start();
      await verifiedDomain(server, dns.zone, 'crash.test');
      // A slow destination: attempts are in flight on every address when the kill lands.
      sink.delayData(30);
      const accepted: string[] = [];
      for (let i = 0; i < 120; i++) {
        const body = JSON.stringify({ from: 'app@crash.test', to: `user${i}@dest.test`, subject: `pool ${i}`, text: 'hello' });
        const res = await fetch(`${server.base}/emails`, { method: 'POST', headers: server.headers, body });
        expect(res.status).toBe(200);
        accepted.push((await res.json()).id);
      }
      await until(() => sink.messages.length >= 20 || null, 'some deliveries under way');
      server.process!.kill('SIGKILL');
      await server.process!.exited;
      expect(server.process!.signalCode).toBe('SIGKILL');
      sink.delayData(0);
      await server.start();
      const delivered = () => sink.messages.map((m) => /Message-ID: <([0-9a-f-]{36})@crash\.test>/i.exec(m.raw.toString())?.[1]);
      await until(() => accepted.every((id) => delivered().includes(id)) || null, `${accepted.length} deliveries`, 60_000);
      expect(new Set(sink.messages.map((m) => m.remoteAddress)).size).toBeGreaterThan(1);
      expect(sink.messages.every((m) => POOL.includes(m.remoteAddress))).toBe(true);
      expect((await server.api('GET', `/emails/${accepted[0]}`)).body.last_event).toBe('delivered');
    } finally {
      await server.kill();
      await sink.close();
      await dns.close();
    }
  }, 120_000);
});
