// Accepted means durable (SPEC.md §2): a real `posthorn serve` child accepts a burst of sends and
// is killed with SIGKILL in the middle of it. After a restart on the same data dir, every email
// that got a 200 is delivered, and none twice. During the burst the destination MTA refuses
// connections, so every accepted email is in the queue (never half-delivered) when the kill lands.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';

const MAIN = join(import.meta.dir, '../../src/main.ts');
const dir = mkdtempSync(join(tmpdir(), 'posthorn-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function until(fn: () => Promise<boolean> | boolean, what: string, tries = 300) {
  for (let i = 0; i < tries; i++) {
    if (await fn()) return;
    await Bun.sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('kill -9 during a burst of sends', () => {
  test('every email that got a 200 is delivered after restart, none twice', async () => {
    const dns = await startDnsServer();
    const sink = await startSink({ tls: 'none' });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      POSTHORN_LOG: 'silent',
      POSTHORN_DATA_DIR: join(dir, 'data'),
      POSTHORN_HTTP_HOST: '127.0.0.1',
      POSTHORN_HTTP_PORT: String(port),
      POSTHORN_SMTP_STARTTLS_PORTS: '',
      POSTHORN_SMTP_TLS_PORTS: '',
      POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
      POSTHORN_DNS_SERVERS: dns.address,
      POSTHORN_DELIVERY_MX_PORT: String(sink.port),
      POSTHORN_DELIVERY_RETRY_SCHEDULE: '1s',
      POSTHORN_LIMITS_REQUESTS_PER_SECOND: '100000',
    };
    const init = Bun.spawnSync([process.execPath, MAIN, 'init', '--json'], { env });
    const { api_key } = JSON.parse(init.stdout.toString());
    const headers = { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' };
    const serve = () => Bun.spawn([process.execPath, MAIN, 'serve'], { env, stdout: 'ignore', stderr: 'inherit' });
    const healthy = () => fetch(`${base}/health`).then((r) => r.ok, () => false);

    let child = serve();
    try {
      await until(healthy, 'first start');
      // A domain verified through real DNS checks.
      const created = await (await fetch(`${base}/domains`, { method: 'POST', headers, body: JSON.stringify({ name: 'crash.test' }) })).json();
      for (const r of created.records as { type: string; name: string; value: string; priority?: number }[]) {
        const fqdn = r.name === '@' ? 'crash.test' : `${r.name}.crash.test`;
        if (r.type === 'MX') dns.zone.set(fqdn, 'MX', [{ exchange: r.value, priority: r.priority ?? 10 }]);
        else dns.zone.set(fqdn, 'TXT', [r.value]);
      }
      dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
      dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
      await fetch(`${base}/domains/${created.id}/verify`, { method: 'POST', headers });
      await until(async () => (await (await fetch(`${base}/domains/${created.id}`, { headers })).json()).status === 'verified', 'verification');

      // The destination is down for now: accepted mail can only wait in the queue.
      sink.refuseConnections({ code: 421, message: '4.3.2 down for maintenance' });
      const accepted: string[] = [];
      let sent = 0;
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          sent++;
          const body = JSON.stringify({ from: 'app@crash.test', to: `user${w}-${i}@dest.test`, subject: `burst ${w}-${i}`, text: 'hello' });
          const res = await fetch(`${base}/emails`, { method: 'POST', headers, body }).catch(() => null);
          if (!res) return; // the server died under us: no answer means not accepted
          if (res.status === 200) accepted.push((await res.json()).id);
          if (accepted.length >= 150 && !killed) {
            killed = true;
            child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
      await child.exited;
      expect(child.signalCode).toBe('SIGKILL');
      expect(accepted.length).toBeGreaterThanOrEqual(150);

      // Restart on the same data and let the destination accept mail again.
      sink.refuseConnections(null);
      child = serve();
      await until(healthy, 'restart');
      const want = new Set(accepted);
      const delivered = () => sink.messages.map((m) => /Message-ID: <([0-9a-f-]{36})@crash\.test>/i.exec(m.raw.toString())?.[1]);
      await until(() => accepted.every((id) => delivered().includes(id)), `${accepted.length} deliveries`, 600);
      const ids = delivered();
      const counts = new Map<string, number>();
      for (const id of ids) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      expect(accepted.every((id) => counts.get(id) === 1)).toBe(true);
      // Anything delivered beyond the acknowledged set was accepted but its answer was lost in the kill.
      for (const id of counts.keys()) if (!want.has(id)) expect(sent).toBeGreaterThan(accepted.length);
      const one = await (await fetch(`${base}/emails/${accepted[0]}`, { headers })).json();
      expect(one.last_event).toBe('delivered');
    } finally {
      child.kill('SIGKILL');
      await child.exited;
      await sink.close();
      await dns.close();
    }
  });
});
