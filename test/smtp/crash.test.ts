// 250 means durably spooled (docs/mail.md §4): a real `posthorn serve` child receives a burst of
// inbound mail over SMTP and is killed with SIGKILL in the middle of it. The test DNS server drops
// every query meanwhile, so each message's SPF/DKIM/DMARC check waits out its DNS timeouts and none
// is processed when the kill lands: everything answered 250 is only in the spool. After a restart on
// the same data dir, with DNS answering again, every message that got a 250 is stored, none twice.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns';
import { serveChild, freePort, type ServeChild } from '../helpers/child';
import { until } from '../helpers/wait';
import { mta } from '../helpers/smtp';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-inbound-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Subjects of every received email, all pages. */
async function storedSubjects(server: ServeChild): Promise<string[]> {
  const out: string[] = [];
  let after = '';
  for (;;) {
    const page = await server.api('GET', `/emails/receiving?limit=100${after ? `&after=${after}` : ''}`);
    out.push(...page.body.data.map((e: { subject: string }) => e.subject));
    if (!page.body.has_more) return out;
    after = page.body.data.at(-1).id;
  }
}

describe('kill -9 during a burst of inbound mail', () => {
  test('every message answered 250 is stored after restart, none twice', async () => {
    const dns = await startDnsServer();
    const port = await freePort();
    const server = await serveChild(join(dir, 'data'), { POSTHORN_DNS_SERVERS: dns.address, POSTHORN_SMTP_STARTTLS_PORTS: String(port) });
    try {
      await server.start();
      expect((await server.api('POST', '/domains', { name: 'crash-in.test', capabilities: { receiving: 'enabled' } })).status).toBe(201);
      dns.failWith('DROP');

      const accepted: string[] = [];
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const subject = `inbound ${w}-${i}`;
          const t = mta(port);
          try {
            const info = await t.sendMail({ from: `sender${w}@elsewhere.test`, to: `desk${w}@crash-in.test`, subject, text: 'hello' } as never);
            if (/^250 /.test(info.response)) accepted.push(subject);
          } catch {
            return; // the server died under us: no 250 means not accepted
          } finally {
            t.close();
          }
          if (accepted.length >= 120 && !killed) {
            killed = true;
            const storedBeforeKill = (await storedSubjects(server)).length;
            server.process!.kill('SIGKILL');
            // Processing waits on DNS that never answers: the kill finds them in the spool.
            expect(storedBeforeKill).toBeLessThan(accepted.length);
          }
        }
      };
      await Promise.all(Array.from({ length: 12 }, (_, w) => worker(w)));
      await server.process!.exited;
      expect(server.process!.signalCode).toBe('SIGKILL');
      expect(accepted.length).toBeGreaterThanOrEqual(120);

      dns.failWith(null);
      await server.start();
      await until(
        async () => {
          const stored = new Set(await storedSubjects(server));
          return accepted.every((s) => stored.has(s));
        },
        `${accepted.length} inbound messages stored`,
        60_000,
      );
      const counts = new Map<string, number>();
      for (const s of await storedSubjects(server)) counts.set(s, (counts.get(s) ?? 0) + 1);
      // No loss, no duplicate; messages beyond `accepted` had their 250 cut off by the kill.
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      expect(accepted.every((s) => counts.get(s) === 1)).toBe(true);
    } finally {
      await server.kill();
      await dns.close();
    }
  });
});
