// A burst of 10,000 triggering events (docs/api.md §24.8): a real `posthorn serve` child accepts
// them as fast as 16 clients can send, and its back office turns them into runs — contact update,
// segment membership, an email through the sending core — taking triggers and runs in bounded
// batches. Every run completes, and the process's resident memory, sampled all along, stays within
// a fixed bound above what it used before the burst (nothing holds all runs or all triggers).
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns';
import { serveChild, type ServeChild } from '../helpers/child';
import { until } from '../helpers/wait';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-automations-burst-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BURST = 10_000;
const WARM_UP = 500;
/** Growth of the resident set allowed over the warmed-up process while 20× the warm-up runs go through. */
const RSS_BOUND_MB = 256;

/**
 * Anonymous resident memory of a process (Linux /proc `RssAnon`, in MB): the heaps and stacks. The
 * pages of the LMDB file mapped in (`RssFile`) are left out: they follow the data on disk, which
 * the burst adds to, and the kernel reclaims them under pressure.
 */
function rssMb(pid: number): number {
  const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

const fileMb = (pid: number) => Number(/^RssFile:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** Runs of `status`, counted by paging through the list. */
async function count(server: ServeChild, automation: string, status: string): Promise<number> {
  let n = 0;
  let after = '';
  for (;;) {
    const page = (await server.api('GET', `/automations/${automation}/runs?status=${status}&limit=100${after}`)).body;
    n += page.data.length;
    if (!page.has_more) return n;
    after = `&after=${page.data.at(-1).id}`;
  }
}

/** Send `n` events for distinct addresses from 16 clients at once. */
async function burst(server: ServeChild, from: number, n: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < from + n) {
        const i = next++;
        const res = await fetch(`${server.base}/events/send`, {
          method: 'POST',
          headers: server.headers,
          body: JSON.stringify({ event: 'signup', email: `u${i}@nowhere.test`, payload: { name: `User ${i}` } }),
        });
        expect(res.status).toBe(202);
      }
    }),
  );
}

describe('a burst of 10,000 triggering events', () => {
  test('every run completes; memory stays bounded', async () => {
    const dns = await startDnsServer();
    const server = await serveChild(join(dir, 'data'), { POSTHORN_DNS_SERVERS: dns.address });
    try {
      await server.start();
      const created = (await server.api('POST', '/domains', { name: 'burst.test' })).body;
      dns.zone.publish('burst.test', created.records);
      await server.api('POST', `/domains/${created.id}/verify`);
      await until(async () => (await server.api('GET', `/domains/${created.id}`)).body.status === 'verified', 'verification');
      const tpl = (
        await server.api('POST', '/templates', {
          name: 't',
          from: 'app@burst.test',
          subject: 'Hi {{{NAME}}}',
          html: '<p>Welcome, {{{NAME}}}</p>',
          variables: [{ key: 'NAME', type: 'string' }],
        })
      ).body.id;
      await server.api('POST', `/templates/${tpl}/publish`);
      const segment = (await server.api('POST', '/segments', { name: 'signed up' })).body.id;
      await server.api('POST', '/events', { name: 'signup', schema: { name: 'string' } });
      const auto = await server.api('POST', '/automations', {
        name: 'burst',
        status: 'enabled',
        steps: [
          { key: 'start', type: 'trigger', config: { event_name: 'signup' } },
          { key: 'name', type: 'contact_update', config: { first_name: { var: 'event.name' } } },
          { key: 'join', type: 'add_to_segment', config: { segment_id: segment } },
          { key: 'welcome', type: 'send_email', config: { template: { id: tpl, variables: { NAME: { var: 'contact.first_name' } } } } },
        ],
        connections: [
          { from: 'start', to: 'name' },
          { from: 'name', to: 'join' },
          { from: 'join', to: 'welcome' },
        ],
      });
      expect(auto.status).toBe(201);
      const id = auto.body.id;
      const pid = server.process!.pid;

      // Warm up: the caches, structures and code paths a burst uses exist before the baseline.
      await burst(server, 0, WARM_UP);
      await until(async () => (await count(server, id, 'completed')) === WARM_UP, 'the warm-up runs', 60_000);
      const baseline = rssMb(pid);

      let peak = baseline;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peak = Math.max(peak, rssMb(pid));
          await Bun.sleep(200);
        }
      })();
      await burst(server, WARM_UP, BURST);
      await until(
        async () =>
          (await server.api('GET', `/automations/${id}/runs?status=running&limit=1`)).body.data.length === 0 &&
          (await count(server, id, 'completed')) === WARM_UP + BURST,
        `${BURST} runs completed`,
        180_000,
      );
      sampling = false;
      await sampler;

      expect(await count(server, id, 'failed')).toBe(0);
      const contact = (await server.api('GET', `/contacts/u${WARM_UP + 1234}@nowhere.test`)).body;
      expect(contact.first_name).toBe(`User ${WARM_UP + 1234}`);
      const growth = peak - baseline;
      console.log(
        `automations burst: ${BURST} runs; anonymous RSS ${baseline.toFixed(0)} MB after warm-up, peak ${peak.toFixed(0)} MB (+${growth.toFixed(0)} MB); file-backed RSS now ${fileMb(pid).toFixed(0)} MB`,
      );
      expect(growth).toBeLessThan(RSS_BOUND_MB);
    } finally {
      await server.kill();
      await dns.close();
    }
  }, 300_000);
});
