// Durable runs (docs/api.md §24.8): a real `posthorn serve` child is killed with SIGKILL — once while
// a run waits in a delay step, once while hundreds of runs are being advanced — and started again on
// the same data. Every run completes, from the step it had committed, and no step's email reaches
// the destination twice (the email commits in the unit of work that moves its run past the step).
// While runs advance the destination refuses connections, and a kill during a delay waits for the
// delivery before it to be recorded, so a kill never lands in the middle of an SMTP delivery (whose
// retry could duplicate a message for a reason that is not the runs').
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { serveChild, verifiedDomain, type ServeChild } from '../helpers/child';
import { until } from '../helpers/wait';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-automations-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A serve child with `crash.test` verified through real DNS checks, a published template and an enabled automation. */
async function setUp(dns: TestDns, sink: Sink, name: string, steps: unknown[], connections: unknown[]) {
  const server = await serveChild(join(dir, name), {
    POSTHORN_DNS_SERVERS: dns.address,
    POSTHORN_DELIVERY_MX_PORT: String(sink.port),
    POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
    POSTHORN_DELIVERY_RETRY_SCHEDULE: '1s',
  });
  await server.start();
  await verifiedDomain(server, dns.zone, 'crash.test');
  const tpl = (
    await server.api('POST', '/templates', {
      name: 't',
      from: 'app@crash.test',
      subject: 'unused',
      html: '<p>{{{STEP}}}</p>',
      variables: [{ key: 'STEP', type: 'string', fallback_value: 'x' }],
    })
  ).body.id;
  await server.api('POST', `/templates/${tpl}/publish`);
  expect((await server.api('POST', '/events', { name: 'go' })).status).toBe(201);
  const auto = await server.api('POST', '/automations', {
    name,
    status: 'enabled',
    steps: steps.map((s) => JSON.parse(JSON.stringify(s).replaceAll('$TPL', tpl))),
    connections,
  });
  expect(auto.status).toBe(201);
  return { server, automation: auto.body.id as string };
}

/** trigger → email "first" → delay → email "second". */
const twoEmails = (delay: string) => ({
  steps: [
    { key: 'start', type: 'trigger', config: { event_name: 'go' } },
    { key: 'first', type: 'send_email', config: { template: { id: '$TPL' }, subject: 'first' } },
    { key: 'pause', type: 'delay', config: { duration: delay } },
    { key: 'second', type: 'send_email', config: { template: { id: '$TPL' }, subject: 'second' } },
  ],
  connections: [
    { from: 'start', to: 'first' },
    { from: 'first', to: 'pause' },
    { from: 'pause', to: 'second' },
  ],
});

/** Subjects the sink received for `to`. */
const subjects = (sink: Sink, to: string) => sink.to(to).map((m) => /^Subject: (.*)$/m.exec(m.raw.toString())?.[1]?.trim());

async function runsOf(server: ServeChild, automation: string, status: string): Promise<{ id: string }[]> {
  const out: { id: string }[] = [];
  let after = '';
  for (;;) {
    const page = (await server.api('GET', `/automations/${automation}/runs?status=${status}&limit=100${after}`)).body;
    out.push(...page.data);
    if (!page.has_more) return out;
    after = `&after=${page.data.at(-1).id}`;
  }
}

describe('kill -9 and restart', () => {
  test('a run killed in its delay step resumes after the restart and sends each email once', async () => {
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    const { steps, connections } = twoEmails('3 seconds');
    const { server, automation } = await setUp(dns, sink, 'delay', steps, connections);
    try {
      const to = 'waiting@dest.test';
      expect((await server.api('POST', '/events/send', { event: 'go', email: to })).status).toBe(202);
      await until(() => sink.to(to).length === 1, 'the first email');
      // Its delivery recorded too: a kill between the destination's 250 and that commit would have
      // the message tried again after the restart — SMTP's own duplicate, not the run's.
      await until(
        async () =>
          (await server.api('GET', '/emails')).body.data.some((e: { to: string[]; last_event: string }) => e.to.includes(to) && e.last_event === 'delivered'),
        'the first email recorded delivered',
      );
      // The run is in its delay now: its history says so.
      const [run] = await runsOf(server, automation, 'running');
      const before = (await server.api('GET', `/automations/${automation}/runs/${run!.id}`)).body;
      expect(before.steps.map((s: { key: string; status: string }) => `${s.key}:${s.status}`)).toEqual(['start:completed', 'first:completed', 'pause:waiting']);
      await server.kill();
      expect(server.process!.signalCode).toBe('SIGKILL');

      await server.start();
      await until(async () => (await runsOf(server, automation, 'completed')).length === 1, 'the run completed', 60_000);
      await until(() => sink.to(to).length >= 2, 'the second email');
      const after = (await server.api('GET', `/automations/${automation}/runs/${run!.id}`)).body;
      expect(after.steps.map((s: { key: string; status: string }) => `${s.key}:${s.status}`)).toEqual([
        'start:completed',
        'first:completed',
        'pause:completed',
        'second:completed',
      ]);
      // Nothing left to deliver (an attempt in flight or a retry keeps its entry in the queue): still one of each.
      await until(async () => (await server.api('GET', '/queue')).body.data.length === 0, 'the delivery queue to empty');
      expect(subjects(sink, to)).toEqual(['first', 'second']);
    } finally {
      await server.kill();
      await sink.close();
      await dns.close();
    }
  });

  test('killed while hundreds of runs advance: every run completes, every email once', async () => {
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    const { steps, connections } = twoEmails('1 second');
    const { server, automation } = await setUp(dns, sink, 'burst', steps, connections);
    const N = 300;
    const recipients = Array.from({ length: N }, (_, i) => `r${i}@dest.test`);
    try {
      // Accepted mail waits in the queue: nothing is mid-delivery when the kill lands.
      sink.refuseConnections({ code: 421, message: '4.3.2 down for maintenance' });
      const base = server.base;
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          for (let i = w; i < N; i += 8) {
            const res = await fetch(`${base}/events/send`, {
              method: 'POST',
              headers: server.headers,
              body: JSON.stringify({ event: 'go', email: recipients[i] }),
            });
            expect(res.status).toBe(202);
          }
        }),
      );
      // Some runs have sent their first email, not all have finished: kill.
      await until(async () => (await server.api('GET', '/emails?limit=100')).body.data.length >= 50, 'the first emails');
      await server.kill();

      sink.refuseConnections(null);
      await server.start();
      await until(async () => (await runsOf(server, automation, 'completed')).length === N, `${N} completed runs`, 120_000);
      await until(() => recipients.every((r) => sink.to(r).length >= 2), 'two emails per recipient', 120_000);
      // Nothing left to deliver: a duplicate would be at the sink by now.
      await until(async () => (await server.api('GET', '/queue')).body.data.length === 0, 'the delivery queue to empty', 60_000);
      for (const r of recipients) expect(subjects(sink, r)).toEqual(expect.arrayContaining(['first', 'second']));
      for (const r of recipients) expect(sink.to(r)).toHaveLength(2);
      expect(await runsOf(server, automation, 'running')).toHaveLength(0);
      expect(await runsOf(server, automation, 'failed')).toHaveLength(0);
    } finally {
      await server.kill();
      await sink.close();
      await dns.close();
    }
  }, 180_000);
});
