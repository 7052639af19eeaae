// One slow destination must not hold up the others: a destination whose MX accepts connections
// and then never answers gets at most its share of attempts in flight, and mail for a healthy
// destination queued after a backlog for the slow one is still delivered.
import { test, expect } from 'bun:test';
import { createServer, type Socket } from 'node:net';
import { DEFAULT_POOL } from '../../src/delivery/pool';
import { startMailWorld } from '../helpers/world';
import { queueEmail, waitForEmail } from '../helpers/emails';
import type { EmailRec } from '../../src/store';

test('a hanging MX holds at most its per-destination share of the delivery slots', async () => {
  const world = await startMailWorld();
  const { p, dns, sink, domain } = world;
  // The slow MX: same port as the sink, on another loopback address; greets nobody.
  const held: Socket[] = [];
  const tarpit = createServer((s) => held.push(s));
  await new Promise<void>((r) => tarpit.listen(sink.port, '127.0.0.2', r));
  dns.zone.set('slow.test', 'MX', [{ exchange: 'mx.slow.test', priority: 10 }]);
  dns.zone.set('mx.slow.test', 'A', ['127.0.0.2']);
  try {
    const backlog: EmailRec[] = [];
    for (let i = 0; i < 60; i++) backlog.push(await queueEmail(p.svc, domain, { to: [`u${i}@slow.test`] }));
    const healthy = await queueEmail(p.svc, domain, { to: ['ann@dest.test'] });
    const done = await waitForEmail(p.svc, healthy, (e) => e.recipients['ann@dest.test'] === 'delivered');
    expect(done.last_event).toBe('delivered');
    // The backlog is still waiting, and never took more than its share of connections.
    expect(held.length).toBeLessThanOrEqual(DEFAULT_POOL.perDestination);
    const stored = await Promise.all(backlog.map((e) => p.svc.store.emails.get(e.team_id, e.id)));
    expect(stored.every((e, i) => e!.recipients[backlog[i]!.to[0]!] === 'pending')).toBe(true);
  } finally {
    for (const s of held) s.destroy(); // the hanging attempts fail now, so shutdown is quick
    tarpit.close();
    await world.stop();
  }
});
