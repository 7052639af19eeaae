// Regions in cluster mode (README.md, "Regions"): two nodes on one PostgreSQL database, one in
// eu-west-1 sending from 127.0.0.3, one in us-east-1 sending from 127.0.0.4 (delivery.ips, so the
// sink's view of the peer address says which node delivered). Each domain's mail is claimed only by
// nodes of its region; with a region's nodes down its mail waits — and GET /health says so — while
// the other region's flows.
import { describe, test, expect } from 'bun:test';
import { SQL } from 'bun';
import { startPgServer } from '../helpers/postgres';
import { startPosthorn } from '../helpers/posthorn';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { verifiedDomain, waitForEmail, settled } from '../helpers/emails';
import { until } from '../helpers/wait';

describe('two regions on one database', () => {
  test("each region's mail leaves from its nodes only; with a region down its mail waits, the other flows", async () => {
    const pg = await startPgServer();
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
    dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
    const db = await pg.database();
    const node = (region: string, address: string) =>
      startPosthorn({
        'database.url': db,
        'dns.servers': [dns.address],
        'delivery.mx_port': sink.port,
        'security.allow_private_networks': true,
        'delivery.retry_schedule': '2s',
        'cluster.region': region,
        'delivery.ips': [{ address, ehlo: `${region}.posthorn.test` }],
      });
    const eu = await node('eu-west-1', '127.0.0.3');
    const us = await node('us-east-1', '127.0.0.4');
    const admin = new SQL({ url: db, max: 1 });
    try {
      const euDomain = await verifiedDomain(eu, 'eu.test');
      expect((await eu.api('PATCH', `/domains/${euDomain.id}`, { body: { region: 'eu-west-1' } })).status).toBe(200);
      const usDomain = await verifiedDomain(eu, 'us.test');
      expect((await eu.api('GET', `/domains/${usDomain.id}`)).body.region).toBe('us-east-1');
      // Sent through the eu node's API: where mail is accepted does not decide where it leaves from.
      const send = async (from: string, to: string) => {
        const r = await eu.api('POST', '/emails', { body: { from, to, subject: 'hello', text: 'x' } });
        expect(r.status).toBe(200);
        return { team_id: eu.creds.team_id, id: r.body.id as string };
      };
      const sent = [];
      for (let i = 0; i < 4; i++) sent.push(await send('a@eu.test', `eu${i}@dest.test`), await send('a@us.test', `us${i}@dest.test`));
      for (const e of sent) await waitForEmail(eu.svc, e, settled);
      for (let i = 0; i < 4; i++) {
        expect(sink.to(`eu${i}@dest.test`)[0]!.remoteAddress).toBe('127.0.0.3');
        expect(sink.to(`us${i}@dest.test`)[0]!.remoteAddress).toBe('127.0.0.4');
      }

      // The us-east-1 node goes away (and its heartbeat ages out): us mail waits, eu mail flows.
      await us.stop();
      await admin`UPDATE nodes SET seen_at = now() - interval '1 hour' WHERE region = 'us-east-1'`;
      const waiting = await send('a@us.test', 'late-us@dest.test');
      const flowing = await send('a@eu.test', 'late-eu@dest.test');
      await waitForEmail(eu.svc, flowing, settled);
      expect(sink.to('late-eu@dest.test')[0]!.remoteAddress).toBe('127.0.0.3');
      const health = await until(async () => {
        const h = (await (await fetch(`${eu.url}/health`)).json()) as { regions_waiting?: string[] };
        return h.regions_waiting ? h : null;
      }, 'GET /health names the region whose mail waits');
      expect(health).toMatchObject({ status: 'ok', regions_waiting: ['us-east-1'] });
      // GET /regions (the dashboard's domain page and IPs page) says the same of each region.
      const regions = (await eu.api('GET', '/regions')).body.data as { object: string; name: string; defined: boolean; waiting: boolean }[];
      expect(regions.find((r) => r.name === 'us-east-1')).toEqual({ object: 'region', name: 'us-east-1', defined: false, waiting: true });
      expect(regions.find((r) => r.name === 'eu-west-1')).toEqual({ object: 'region', name: 'eu-west-1', defined: true, waiting: false });
      expect(sink.to('late-us@dest.test')).toEqual([]);
      expect((await eu.svc.store.queue.entriesOf(waiting.team_id, waiting.id)).length).toBe(1);
    } finally {
      await admin.close();
      await eu.stop();
      await sink.close();
      await dns.close();
      pg.destroy();
    }
  }, 120_000);
});
