// Accepted means durable (docs/ARCHITECTURE.md): a real `posthorn serve` child accepts a burst of sends
// (single, or batches that wait in the incoming queue until the back office writes them as emails)
// and is killed with SIGKILL in the middle of it. After a restart on the same data dir, every email
// that got a 200 is delivered, and none twice. During the burst the destination MTA refuses
// connections, so every accepted email is in the queue (never half-delivered) when the kill lands.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { serveChild, verifiedDomain } from '../helpers/child';
import { until } from '../helpers/wait';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One request of worker `w`'s `i`-th turn: its path and body, and the ids a 200 answers. */
type Burst = (w: number, i: number) => { path: string; body: unknown; ids: (answer: { id?: string; data?: { id: string }[] }) => string[] };

const single: Burst = (w, i) => ({
  path: '/emails',
  body: { from: 'app@crash.test', to: `user${w}-${i}@dest.test`, subject: `burst ${w}-${i}`, text: 'hello' },
  ids: (a) => [a.id!],
});
const batch: Burst = (w, i) => ({
  path: '/emails/batch',
  body: Array.from({ length: 10 }, (_, k) => ({ from: 'app@crash.test', to: `user${w}-${i}-${k}@dest.test`, subject: `batch ${w}-${i}-${k}`, text: 'hello' })),
  ids: (a) => a.data!.map((d) => d.id),
});

describe('kill -9 during a burst of sends', () => {
  for (const [name, burst, atLeast] of [
    ['single sends', single, 150],
    ['batches (the incoming queue)', batch, 600],
  ] as const)
    test(`${name}: every email that got a 200 is delivered after restart, none twice`, () => killDuring(join(dir, name.split(' ')[0]!), burst, atLeast));
});

async function killDuring(data: string, burst: Burst, atLeast: number): Promise<void> {
  const dns = await startDnsServer();
  const sink = await startSink({ tls: 'none' });
  const server = await serveChild(data, {
    POSTHORN_DNS_SERVERS: dns.address,
    POSTHORN_DELIVERY_MX_PORT: String(sink.port),
    POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
    POSTHORN_DELIVERY_RETRY_SCHEDULE: '1s',
  });
  try {
    await server.start();
    // A domain verified through real DNS checks.
    await verifiedDomain(server, dns.zone, 'crash.test');

    // The destination is down for now: accepted mail can only wait in the queue.
    sink.refuseConnections({ code: 421, message: '4.3.2 down for maintenance' });
    const accepted: string[] = [];
    let killed = false;
    const worker = async (w: number) => {
      for (let i = 0; !killed; i++) {
        const req = burst(w, i);
        const res = await fetch(`${server.base}${req.path}`, { method: 'POST', headers: server.headers, body: JSON.stringify(req.body) }).catch(() => null);
        if (!res) return; // the server died under us: no answer means not accepted
        if (res.status === 200) accepted.push(...req.ids(await res.json()));
        if (accepted.length >= atLeast && !killed) {
          killed = true;
          server.process!.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
    await server.process!.exited;
    expect(server.process!.signalCode).toBe('SIGKILL');
    expect(accepted.length).toBeGreaterThanOrEqual(atLeast);

    // Restart on the same data and let the destination accept mail again.
    sink.refuseConnections(null);
    await server.start();
    const delivered = () => sink.messages.map((m) => /Message-ID: <([0-9a-f-]{36})@crash\.test>/i.exec(m.raw.toString())?.[1]);
    await until(
      () => {
        const seen = delivered();
        return accepted.every((id) => seen.includes(id));
      },
      `${accepted.length} deliveries`,
      60_000,
    );
    const counts = new Map<string, number>();
    for (const id of delivered()) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
    // No loss, no duplicate; emails beyond `accepted` had their answer cut off by the kill.
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(accepted.every((id) => counts.get(id) === 1)).toBe(true);
    expect((await server.api('GET', `/emails/${accepted[0]}`)).body.last_event).toBe('delivered');
  } finally {
    await server.kill();
    await sink.close();
    await dns.close();
  }
}
