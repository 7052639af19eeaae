// Accepted means durable, for webhooks too (SPEC.md §2): a real `posthorn serve` child commits a
// burst of contact updates while its webhook endpoint holds every request unanswered, so all their
// events are in the outbox (queued or mid-attempt) when the child is killed with SIGKILL. After a
// restart on the same data dir, every event of every update that got a 200 reaches the receiver,
// attempts cut short by the kill are retried under the same svix-id, and no update has two events.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Webhook as SvixWebhook } from 'svix';
import { startReceiver } from '../helpers/receiver';

const MAIN = join(import.meta.dir, '../../src/main.ts');
const dir = mkdtempSync(join(tmpdir(), 'posthorn-webhook-crash-'));
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

describe('kill -9 with webhook events outstanding', () => {
  test('every event of an acknowledged change is delivered after restart', async () => {
    const receiver = await startReceiver();
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
      POSTHORN_DNS_SERVERS: '127.0.0.1:9',
      POSTHORN_LIMITS_REQUESTS_PER_SECOND: '100000',
      POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
      POSTHORN_WEBHOOKS_RETRY_SCHEDULE: '1s',
    };
    const init = Bun.spawnSync([process.execPath, MAIN, 'init', '--json'], { env });
    const { api_key } = JSON.parse(init.stdout.toString());
    const headers = { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' };
    const serve = () => Bun.spawn([process.execPath, MAIN, 'serve'], { env, stdout: 'ignore', stderr: 'inherit' });
    const healthy = () => fetch(`${base}/health`).then((r) => r.ok, () => false);
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    };

    let child = serve();
    try {
      await until(healthy, 'first start');
      const hook = await api('POST', '/webhooks', { endpoint: receiver.url, events: ['contact.updated'] });
      expect(hook.status).toBe(201);
      const secret = hook.body.signing_secret as string;
      const contact = await api('POST', '/contacts', { email: 'crash@people.test' });
      expect(contact.status).toBe(201);

      // The endpoint takes requests but never answers: every event stays outstanding.
      receiver.answer(() => ({ hold: true }));
      const accepted: string[] = [];
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const name = `n-${w}-${i}`;
          const res = await fetch(`${base}/contacts/${contact.body.id}`, { method: 'PATCH', headers, body: JSON.stringify({ first_name: name }) }).catch(() => null);
          if (!res) return; // the server died under us: no answer means not accepted
          if (res.status === 200) accepted.push(name);
          // Killed once some attempts are in flight at the endpoint and many events are queued.
          if (accepted.length >= 60 && receiver.requests.length > 0 && !killed) {
            killed = true;
            child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
      await child.exited;
      expect(child.signalCode).toBe('SIGKILL');
      const cutShort = new Set(receiver.requests.map((h) => h.id));
      expect(cutShort.size).toBeGreaterThan(0); // some attempts were in flight when the kill landed

      // Restart; the endpoint answers from now on.
      // (Requests held before the kill stay unanswered: their connections died with the child.)
      receiver.answer(() => ({ status: 200 }));
      child = serve();
      await until(healthy, 'restart');
      const names = () => receiver.delivered().map((h) => h.payload.data.first_name as string);
      await until(() => accepted.every((n) => names().includes(n)), `${accepted.length} webhook deliveries`, 600);

      // One event per update (de-duplicated on svix-id), each verifiable; the interrupted
      // attempts came again under their own ids.
      const delivered = receiver.delivered();
      const perName = new Map<string, number>();
      for (const h of delivered) perName.set(h.payload.data.first_name, (perName.get(h.payload.data.first_name) ?? 0) + 1);
      expect([...perName.values()].every((n) => n === 1)).toBe(true);
      for (const id of cutShort) expect(delivered.some((h) => h.id === id)).toBe(true);
      for (const h of delivered) expect(new SvixWebhook(secret).verify(h.body, h.headers)).toBeTruthy();
      const events = await api('GET', `/webhooks/${hook.body.id}/events?limit=100`);
      const ofAccepted = events.body.data.filter((e: { status: string }) => e.status === 'success');
      expect(ofAccepted.length).toBeGreaterThanOrEqual(accepted.length);
    } finally {
      child.kill('SIGKILL');
      await child.exited;
      await receiver.close();
    }
  });
});
