// Cluster mode (README.md, "Cluster mode"): three `posthorn serve` nodes on one PostgreSQL
// database. Sends are spread across the nodes; one node is killed with SIGKILL while deliveries
// and webhooks are in flight. Its claims are leases — each entry it held waits at its persisted
// next attempt time, the first retry step (5 minutes) — and a node not seen for TAKEOVER_S (20 s)
// has them handed to the others at once: every email that got a 200 is delivered, and every
// `email.delivered` event reaches the webhook endpoint, within that interval and a margin — far
// sooner than any lease would run out. What the killed node had already sent when it died can be
// sent again (at-least-once): duplicates are counted and bounded by what was in flight on it.
// Three nodes also start on data directories that do not exist yet, with their SMTP listeners on.
import { describe, test, expect, afterAll } from 'bun:test';
import { SQL } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { startReceiver } from '../helpers/receiver';
import { freePort, serveChild, type ServeChild } from '../helpers/child';
import { until } from '../helpers/wait';
import { postgres } from '../helpers/postgres';
import { TAKEOVER_S } from '../../src/store/pg';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-cluster-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * How long after the kill the test waits for the last delivery: the takeover interval (20 s, with
 * up to a heartbeat more) and a margin for the backlog on a loaded machine — well under the
 * 5-minute lease, so mail that only a lease's end would free fails the test.
 */
const TAKEOVER_MARGIN_MS = (TAKEOVER_S + 5) * 1000 + 60_000;

const messageId = (raw: Buffer) => /Message-ID: <([0-9a-f-]{36})@cluster\.test>/i.exec(raw.toString())?.[1];

describe('three nodes on one database, one killed with kill -9 mid-delivery', () => {
  test('every accepted email is delivered and every delivered event reaches its webhook; duplicates are counted', async () => {
    const pg = await postgres();
    const url = await pg.database('cluster');
    const db = new SQL(url);
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    const hooks = await startReceiver();
    const env = {
      POSTHORN_DATABASE_URL: url,
      POSTHORN_DNS_SERVERS: dns.address,
      POSTHORN_DELIVERY_MX_PORT: String(sink.port),
      // The default retry schedules: the killed node's leases last 5 minutes, so only the
      // takeover delivers its mail within this test.
      POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
    };
    // Each node on a data directory that does not exist yet, SMTP listeners on (the generated
    // certificate is the first thing written there). The first node provisions the team; the
    // others share its database (and its key).
    const smtp = async () => ({ POSTHORN_SMTP_STARTTLS_PORTS: String(await freePort()), POSTHORN_SMTP_TLS_PORTS: String(await freePort()) });
    const fresh = (n: number) => join(dir, 'fresh', `n${n}`);
    const first = await serveChild(fresh(0), { ...env, ...(await smtp()) });
    const nodes: ServeChild[] = [
      first,
      await serveChild(fresh(1), { ...env, ...(await smtp()) }, { apiKey: first.apiKey }),
      await serveChild(fresh(2), { ...env, ...(await smtp()) }, { apiKey: first.apiKey }),
    ];
    try {
      await Promise.all(nodes.map((n) => n.start()));
      for (const n of nodes) expect((await (await fetch(`${n.base}/health`)).json()).database).toBe('reachable');

      // A domain verified through real DNS checks (asked of one node, seen by all).
      const created = (await first.api('POST', '/domains', { name: 'cluster.test' })).body;
      dns.zone.publish('cluster.test', created.records);
      dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
      dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
      await first.api('POST', `/domains/${created.id}/verify`);
      await until(async () => (await nodes[2]!.api('GET', `/domains/${created.id}`)).body.status === 'verified', 'verification');
      expect((await nodes[1]!.api('POST', '/webhooks', { endpoint: hooks.url, events: ['email.delivered'] })).body.id).toBeString();

      // Deliveries take a while each, so that many are in flight on every node when the kill lands.
      sink.delayData(300);
      const accepted: string[] = [];
      const perNode = [0, 0, 0];
      const victim = nodes[1]!;
      let killed = false;
      const TOTAL = 240;
      // The kill lands once mail is flowing: some delivered, more in flight, more queued; sends go on.
      let killedAt = 0;
      // The victim's leases: entries in an attempt, which its claim stamped with its node name (host:pid).
      const leasesOfVictim = async () =>
        Number(
          (await db.unsafe(`SELECT count(*)::int AS n FROM queue WHERE node LIKE $1 AND entry->>'attempting' IS NOT NULL`, [`%:${victim.process!.pid}`]))[0].n,
        );
      let leasedAtKill = 0;
      const holdsLeases = async () => {
        leasedAtKill = await leasesOfVictim();
        return leasedAtKill > 0;
      };
      const killer = until(() => sink.messages.length >= 20, 'the first deliveries', 60_000)
        .then(() => until(holdsLeases, 'the victim to hold leases', 60_000))
        .then(() => {
          killed = true;
          killedAt = Date.now();
          victim.process!.kill('SIGKILL');
        });
      const worker = async (w: number) => {
        for (let i = 0; accepted.length < TOTAL || !killed; i++) {
          const k = (w + i) % 3;
          const n = nodes[k]!;
          const body = JSON.stringify({ from: 'app@cluster.test', to: `user${w}-${i}@dest.test`, subject: `spread ${w}-${i}`, text: 'hello' });
          const res = await fetch(`${n.base}/emails`, { method: 'POST', headers: n.headers, body }).catch(() => null);
          // No answer (the killed node) means not accepted.
          if (res?.status === 200) {
            accepted.push((await res.json()).id);
            perNode[k]!++;
          }
        }
      };
      await Promise.all([killer, ...Array.from({ length: 12 }, (_, w) => worker(w))]);
      await victim.process!.exited;
      expect(victim.process!.signalCode).toBe('SIGKILL');
      // It died holding leases of 5 minutes: only the takeover frees them within this test.
      expect(leasedAtKill).toBeGreaterThan(0);
      // Sends were spread: each node accepted its share before (or without) the kill.
      expect(perNode.every((n) => n > 0)).toBe(true);

      // Every accepted email arrives (the dead node's leases are taken over once it is not seen
      // for TAKEOVER_S), well before the 5 minutes its leases would last…
      const delivered = () => {
        const counts = new Map<string, number>();
        for (const m of sink.messages) {
          const id = messageId(m.raw);
          if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
        }
        return counts;
      };
      await until(
        () => {
          const seen = delivered();
          return accepted.every((id) => seen.has(id));
        },
        `${accepted.length} deliveries`,
        TAKEOVER_MARGIN_MS,
      );
      const allDelivered = Date.now() - killedAt;
      // …and every email.delivered event reaches the endpoint (one webhook message per event).
      const events = () => {
        const counts = new Map<string, number>();
        for (const h of hooks.requests) {
          const id = h.payload.data.email_id as string;
          if (h.status === 200 && h.payload.type === 'email.delivered') counts.set(id, (counts.get(id) ?? 0) + 1);
        }
        return counts;
      };
      await until(
        () => {
          const seen = events();
          return accepted.every((id) => seen.has(id));
        },
        `${accepted.length} webhook events`,
        TAKEOVER_MARGIN_MS,
      );

      const deliveries = delivered();
      const duplicateMail = [...deliveries.values()].reduce((n, c) => n + c - 1, 0);
      const hookCounts = events();
      const duplicateHooks = [...hookCounts.values()].reduce((n, c) => n + c - 1, 0);
      console.log(
        `cluster kill -9: ${accepted.length} accepted (per node ${perNode.join('/')}), ${deliveries.size} delivered, ` +
          `${duplicateMail} duplicate deliveries, ${hookCounts.size} delivered events, ${duplicateHooks} duplicate webhook messages; ` +
          `${leasedAtKill} leases held by the killed node, all delivered ${(allDelivered / 1000).toFixed(1)} s after the kill`,
      );
      // At-least-once across a crash: only what the dead node had in hand can come twice — at most
      // its delivery concurrency (100) and its webhook concurrency (64).
      expect(duplicateMail).toBeLessThanOrEqual(100);
      expect(duplicateHooks).toBeLessThanOrEqual(64);
      // The survivors agree on the outcome.
      expect((await nodes[2]!.api('GET', `/emails/${accepted[0]}`)).body.last_event).toBe('delivered');
    } finally {
      await Promise.all(nodes.map((n) => n.kill()));
      await Promise.all([sink.close(), hooks.close(), dns.close()]);
      await db.close();
      await pg.drop(url);
    }
  }, 180_000);
});
