// The inbound spool and its processor (docs/mail.md §4): a 250 means the message is in the spool,
// committed, and the processor stores it afterwards; the spool then forgets it. A message whose
// processing fails is retried at its persisted retry time, then given up on after MAX_ATTEMPTS:
// kept with its error until retention removes it, logged, never due again. A message whose
// attempts all died with the process is given up on the same way, without another attempt.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startPosthornSmtp, mta, inboundProcessed, type RunningSmtp } from '../helpers/smtp';
import { until } from '../helpers/wait';
import { MAX_ATTEMPTS } from '../../src/inbound/processor';
import { newId } from '../../src/ids';
import { captureLog } from '../helpers/log';
import type { SpooledMessage } from '../../src/store';

let s: RunningSmtp;
let domain: { id: string; team_id: string };

beforeAll(async () => {
  s = await startPosthornSmtp();
  const d = await s.p.api('POST', '/domains', { body: { name: 'spool.test', capabilities: { receiving: 'enabled' } } });
  domain = { id: d.body.id, team_id: s.p.creds.team_id };
});
afterAll(() => s.stop());

const subjects = async () => (await s.p.api('GET', '/emails/receiving')).body.data.map((e: { subject: string }) => e.subject);

/** A spooled message for spool.test, as the listener writes it (bytes given separately). */
function spooled(fields: Partial<SpooledMessage> = {}): SpooledMessage {
  return {
    id: newId(),
    received_at: new Date().toISOString(),
    envelope: { mail_from: 'x@sender.test', remote_address: '127.0.0.1', helo: 'mta.sender.test', tls: false },
    session_id: 'test',
    inbound: [{ team_id: domain.team_id, domain_id: domain.id, recipients: ['desk@spool.test'] }],
    reports: [],
    size: 0,
    attempts: 0,
    attempting: false,
    error: null,
    ...fields,
  };
}

describe('inbound spool', () => {
  test('a message answered 250 is stored by the processor, and leaves the spool', async () => {
    const t = mta(s.starttls);
    expect((await t.sendMail({ from: 'x@sender.test', to: 'desk@spool.test', subject: 'spooled', text: 'hi' } as never)).response).toBe('250 2.0.0 OK');
    t.close();
    await inboundProcessed(s.p);
    expect(await subjects()).toContain('spooled');
    expect(await s.p.svc.store.inboundSpool.counts()).toEqual({ waiting: 0, failed: 0 });
  });

  test('a large message is spooled in a file (fsynced before the 250), stored whole, and its spool file goes once it is processed', async () => {
    const payload = randomBytes(600 * 1024);
    const t = mta(s.starttls);
    expect(
      (
        await t.sendMail({
          from: 'x@sender.test',
          to: 'desk@spool.test',
          subject: 'large',
          text: 'see attached',
          attachments: [{ filename: 'big.bin', content: payload }],
        } as never)
      ).response,
    ).toBe('250 2.0.0 OK');
    t.close();
    await inboundProcessed(s.p);
    const list = (await s.p.api('GET', '/emails/receiving')).body.data;
    const got = (await s.p.api('GET', `/emails/receiving/${list.find((e: { subject: string }) => e.subject === 'large').id}/attachments`)).body.data[0];
    expect(Buffer.from(await (await fetch(got.download_url.replace('http://localhost:3000', s.p.url))).arrayBuffer())).toEqual(payload);
    const live = () => {
      const root = join(s.p.dataDir, 'content', 'inbound_spool_content');
      return existsSync(root) ? readdirSync(root).flatMap((shard) => readdirSync(join(root, shard))) : [];
    };
    await until(() => live().length === 0, 'the spool file to go to the trash');
    expect(existsSync(join(s.p.dataDir, 'content', '.trash', 'inbound_spool_content'))).toBe(true);
  });

  test('a failing attempt is retried at its persisted time; after the last it is kept with its error and logged', async () => {
    // Without its bytes (written as a record only), every attempt fails.
    const first = spooled();
    await s.p.svc.store.write(async (tx) => tx.inboundSpool.update(first, Date.now()));
    await until(async () => (await s.p.svc.store.inboundSpool.get(first.id))?.error != null, 'the first attempt to fail');
    const after1 = (await s.p.svc.store.inboundSpool.get(first.id))!;
    expect(after1).toMatchObject({ attempts: 1, attempting: false, error: 'the message bytes are missing from the spool' });
    // Waiting for its retry, not lost and not given up.
    expect((await s.p.svc.store.inboundSpool.due(Date.now(), 100)).some((d) => d.id === first.id)).toBe(false);
    expect(await s.p.svc.store.inboundSpool.counts()).toEqual({ waiting: 1, failed: 0 });
    await s.p.svc.store.write(async (tx) => tx.inboundSpool.remove(first.id));

    // The last attempt fails: given up.
    const last = spooled({ attempts: MAX_ATTEMPTS - 1 });
    const log = await captureLog(async () => {
      await s.p.svc.store.write(async (tx) => tx.inboundSpool.update(last, Date.now()));
      await inboundProcessed(s.p);
    });
    expect(await s.p.svc.store.inboundSpool.get(last.id)).toMatchObject({
      attempts: MAX_ATTEMPTS,
      attempting: false,
      error: 'the message bytes are missing from the spool',
    });
    expect(await s.p.svc.store.inboundSpool.counts()).toEqual({ waiting: 0, failed: 1 });
    expect(await s.p.svc.store.inboundSpool.nextDue()).toBeNull();
    expect(log.find((l) => l.event === 'inbound.failed')).toMatchObject({ level: 'error', spool_id: last.id, attempts: MAX_ATTEMPTS });

    // Retention removes it with the rest of the day's mail.
    await s.p.svc.store.sweep(Date.now() + 31 * 86_400_000);
    expect(await s.p.svc.store.inboundSpool.get(last.id)).toBeUndefined();
    expect(await s.p.svc.store.inboundSpool.counts()).toEqual({ waiting: 0, failed: 0 });
  });

  test('a message whose every attempt died with the process is given up on without another attempt', async () => {
    const poison = spooled({ attempts: MAX_ATTEMPTS, attempting: true, size: 10 });
    const log = await captureLog(async () => {
      await s.p.svc.store.write(async (tx) => tx.inboundSpool.add(poison, Buffer.from('Subject: poison\r\n\r\nx\r\n'), Date.now()));
      await inboundProcessed(s.p);
    });
    expect(await s.p.svc.store.inboundSpool.get(poison.id)).toMatchObject({ attempts: MAX_ATTEMPTS, error: 'processing was interrupted on every attempt' });
    expect(log.find((l) => l.event === 'inbound.failed')).toMatchObject({ spool_id: poison.id });
    expect(await subjects()).not.toContain('poison');
    await s.p.svc.store.write(async (tx) => tx.inboundSpool.remove(poison.id));
  });
});
