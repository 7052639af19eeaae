// One slow destination must not hold up the others: a destination whose MX accepts connections
// and then never answers gets at most its share of attempts in flight, and mail for a healthy
// destination queued after a backlog for the slow one is still delivered.
import { test, expect } from 'bun:test';
import { createServer, type Socket } from 'node:net';
import { DEFAULT_POOL } from '../../src/delivery/pool';
import { startMailWorld } from '../helpers/world';
import { queueEmail, waitForEmail } from '../helpers/emails';
import { until } from '../helpers/wait';
import { QUEUE_SCAN_LIMIT, type EmailRec } from '../../src/store';

type World = Awaited<ReturnType<typeof startMailWorld>>;

/**
 * slow.test, whose MX (the sink's port, on another loopback address) accepts connections and
 * greets nobody. `held` are the connections it holds; `close` ends them, so the attempts fail and
 * shutdown is quick.
 */
async function hangingDestination({ dns, sink }: World): Promise<{ held: Socket[]; close(): void }> {
  const held: Socket[] = [];
  const tarpit = createServer((s) => held.push(s));
  await new Promise<void>((r) => tarpit.listen(sink.port, '127.0.0.2', r));
  dns.zone.set('slow.test', 'MX', [{ exchange: 'mx.slow.test', priority: 10 }]);
  dns.zone.set('mx.slow.test', 'A', ['127.0.0.2']);
  return {
    held,
    close() {
      for (const s of held) s.destroy();
      tarpit.close();
    },
  };
}

test('a hanging MX holds at most its per-destination share of the delivery slots', async () => {
  const world = await startMailWorld();
  const { p, domain } = world;
  const slow = await hangingDestination(world);
  const { held } = slow;
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
    slow.close();
    await world.stop();
  }
});

// A claim after the first looks only at what became due since the last and at the sites it passed
// over (engine.ts, FULL_SCAN_MS): an entry committed with an earlier due time is found by the next
// scan from the start instead, within a second or so.
test('an entry due before the last claim looked, for another destination, is delivered while a full one is passed over', async () => {
  const world = await startMailWorld();
  const { p, domain } = world;
  const slow = await hangingDestination(world);
  const { held } = slow;
  try {
    for (let i = 0; i < 60; i++) await queueEmail(p.svc, domain, { to: [`u${i}@slow.test`] });
    // The slow destination has its share in flight, and the rest of its backlog is passed over.
    await until(() => held.length >= DEFAULT_POOL.perDestination, 'the slow destination to hold its share', 5_000);
    expect(held.length).toBe(DEFAULT_POOL.perDestination);
    const early = await queueEmail(p.svc, domain, { to: ['ann@dest.test'], dueAt: Date.now() - 60_000 });
    const done = await waitForEmail(p.svc, early, (e) => e.recipients['ann@dest.test'] === 'delivered', 10_000);
    expect(done.last_event).toBe('delivered');
  } finally {
    slow.close();
    await world.stop();
  }
});

// A claim looks at QUEUE_SCAN_LIMIT keys at most; one that stops there inside a backlog whose site
// has no room leaves where it stopped, and the next goes on from there (engine.ts `resume`).
test('mail for a healthy destination queued behind a backlog deeper than the scan limit is delivered', async () => {
  const world = await startMailWorld();
  const { p, domain } = world;
  const slow = await hangingDestination(world);
  try {
    // Queued while the back office is stopped, so that its first claim after the start scans the
    // queue from the start (a fresh engine has no earlier scan to go on from) with the healthy
    // entry behind the whole backlog — what a claim after FULL_SCAN_MS does, without waiting for it.
    await p.svc.backOffice.stop();
    const deep = QUEUE_SCAN_LIMIT + 200;
    for (let i = 0; i < deep; i += 400)
      await Promise.all(Array.from({ length: Math.min(400, deep - i) }, (_, j) => queueEmail(p.svc, domain, { to: [`u${i + j}@slow.test`] })));
    const healthy = await queueEmail(p.svc, domain, { to: ['ann@dest.test'] });
    await p.svc.backOffice.start();
    const done = await waitForEmail(p.svc, healthy, (e) => e.recipients['ann@dest.test'] === 'delivered', 15_000);
    expect(done.last_event).toBe('delivered');
  } finally {
    slow.close();
    await world.stop();
  }
}, 60_000);
