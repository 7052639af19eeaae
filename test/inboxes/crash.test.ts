// kill -9 during inbox intake (docs/api.md §25.4): a real `posthorn serve` child with an inbox gets a
// burst of inbound mail to it and is killed in the middle. As in test/smtp/crash.test.ts the test DNS
// drops every query meanwhile, so the SPF/DKIM/DMARC checks wait out their timeouts and what got a
// 250 is in the spool when the kill lands. After a restart every message answered 250 is an email of
// exactly one thread of the inbox: the received email, its thread and the spool entry's removal
// commit together.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns';
import { serveChild, freePort, verifiedDomain, type ServeChild } from '../helpers/child';
import { until } from '../helpers/wait';
import { mta } from '../helpers/smtp';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-inbox-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Subject → email count of every thread of the inbox, all pages. */
async function threadSubjects(server: ServeChild, inbox: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let after = '';
  for (;;) {
    const page = await server.api('GET', `/inboxes/${inbox}/threads?limit=100${after ? `&after=${after}` : ''}`);
    for (const t of page.body.data as { subject: string; email_count: number }[]) out.set(t.subject, (out.get(t.subject) ?? 0) + t.email_count);
    if (!page.body.has_more) return out;
    after = page.body.data.at(-1).id;
  }
}

describe('kill -9 during a burst of mail to an inbox', () => {
  test('every message answered 250 is in one thread of the inbox after restart, none twice', async () => {
    const dns = await startDnsServer();
    const port = await freePort();
    const server = await serveChild(join(dir, 'data'), { POSTHORN_DNS_SERVERS: dns.address, POSTHORN_SMTP_STARTTLS_PORTS: String(port) });
    try {
      await server.start();
      const domain = await verifiedDomain(server, dns.zone, 'crash-inbox.test');
      expect((await server.api('PATCH', `/domains/${domain}`, { capabilities: { receiving: 'enabled' } })).status).toBe(200);
      const created = await server.api('POST', '/inboxes', { email_address: 'desk@crash-inbox.test' });
      expect(created.status).toBe(201);
      const inbox = created.body.id as string;
      dns.failWith('DROP');

      const accepted: string[] = [];
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const subject = `ticket ${w}-${i}`;
          const t = mta(port);
          try {
            const info = await t.sendMail({ from: `customer${w}-${i}@elsewhere.test`, to: 'desk@crash-inbox.test', subject, text: 'help' } as never);
            if (/^250 /.test(info.response)) accepted.push(subject);
          } catch {
            return; // the server died under us: no 250 means not accepted
          } finally {
            t.close();
          }
          if (accepted.length >= 60 && !killed) {
            killed = true;
            const inThreadsBeforeKill = (await threadSubjects(server, inbox)).size;
            server.process!.kill('SIGKILL');
            // Processing waits on DNS that never answers: the kill finds them in the spool.
            expect(inThreadsBeforeKill).toBeLessThan(accepted.length);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
      await server.process!.exited;
      expect(server.process!.signalCode).toBe('SIGKILL');
      expect(accepted.length).toBeGreaterThanOrEqual(60);

      dns.failWith(null);
      await server.start();
      await until(
        async () => {
          const threads = await threadSubjects(server, inbox);
          return accepted.every((s) => threads.has(s));
        },
        `${accepted.length} messages in the inbox's threads`,
        60_000,
      );
      const threads = await threadSubjects(server, inbox);
      // No loss, no duplicate: one thread per message, holding it once.
      expect(accepted.every((s) => threads.get(s) === 1)).toBe(true);
      expect([...threads.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await server.kill();
      await dns.close();
    }
  });
});
