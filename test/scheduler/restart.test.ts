// Scheduled sends survive a restart: the schedule index is in LMDB, and the first scheduler tick
// after start releases everything that fell due while the process was down.
import { test, expect } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPosthorn } from '../helpers/posthorn';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { verifiedDomain, waitForEmail } from '../helpers/emails';
import { TestClock } from '../helpers/clock';

test('an email scheduled before a shutdown is sent after the restart; a cancelled one is not', async () => {
  const dns = await startDnsServer();
  const sink = await startSink({ tls: 'none' });
  const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-sched-'));
  const overrides = { data_dir: dataDir, 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, 'security.allow_private_networks': true };
  try {
    // The first process lives 10 s in the past: its send time has passed by the time the second
    // starts, with the system's clock, without waiting for it.
    const clock = new TestClock();
    clock.stop(Date.now() - 10_000);
    const first = await startPosthorn(overrides, { now: clock.now });
    await verifiedDomain(first, 'later.test', { dns });
    dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
    dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
    const soon = new Date(clock.now() + 1500).toISOString();
    const kept = await first.resend.emails.send({ from: 'a@later.test', to: 'kept@dest.test', subject: 'kept', text: 'x', scheduledAt: soon });
    const dropped = await first.resend.emails.send({ from: 'a@later.test', to: 'dropped@dest.test', subject: 'dropped', text: 'x', scheduledAt: soon });
    expect((await first.resend.emails.cancel(dropped.data!.id)).error).toBeNull();
    const team = first.creds.team_id;
    await first.stop();

    const second = await startPosthorn(overrides);
    try {
      await sink.waitFor(1, 15_000);
      const done = await waitForEmail(second.svc, { team_id: team, id: kept.data!.id }, (e) => e.last_event === 'delivered', 10_000);
      expect(done.last_event).toBe('delivered');
      // Both were due in the same tick that released `kept`: the cancelled one was never queued
      // and left nothing in the schedule index.
      expect((await second.svc.store.emails.get(team, dropped.data!.id))?.last_event).toBe('canceled');
      expect(await second.svc.store.queue.entriesOf(team, dropped.data!.id)).toEqual([]);
      expect((await second.svc.store.schedule.due(Date.now() + 365 * 86_400_000)).filter((d) => d.id === dropped.data!.id)).toEqual([]);
      await second.svc.backOffice.idle('delivery');
      expect(sink.to('kept@dest.test').length).toBe(1);
      expect(sink.to('dropped@dest.test').length).toBe(0);
    } finally {
      await second.stop();
    }
  } finally {
    await sink.close();
    await dns.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
