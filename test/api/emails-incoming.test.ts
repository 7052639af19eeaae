// The incoming queue (docs/ARCHITECTURE.md §4, "The incoming queue"): POST /emails/batch is
// accepted as received — one record for the request, with its quota and idempotency record, in
// one flushed commit — and written as its emails by the back office. These tests stop the back
// office to look at the request before that: every read of the team (GET /emails/{id}, the list,
// the events) writes what waits first, a request is written once however many take it at once,
// one a stop left waiting is written at the next start, and the suppression list is read when it
// is written. Both stores (the PostgreSQL pass runs test/api).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { verifiedDomain } from '../helpers/emails';
import { settle } from '../../src/sending/incoming';
import { suppress } from '../../src/suppressions';
import { INCOMING_FILE_BYTES } from '../../src/sending/incoming-record';

const mail = (to: string, extra: Record<string, unknown> = {}) => ({ from: 'hello@example.test', to, subject: `to ${to}`, text: 'incoming', ...extra });

describe('a batch waits in the incoming queue until the back office writes it', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-incoming-'));
  let p: Running;

  beforeAll(async () => {
    p = await startPosthorn({ data_dir: dataDir, 'delivery.sandbox': false });
    await verifiedDomain(p, 'example.test');
    // Nothing writes the queue's requests but the reads below.
    await p.svc.backOffice.stop();
  });
  afterAll(async () => {
    await p.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the 2xx answers once one record holds the request; GET /emails/{id} right after shows the email, queued', async () => {
    const { store } = p.svc;
    const sent = await p.resend.batch.send([mail('a@dest.test'), mail('b@dest.test'), mail('c@other.test')]);
    expect(sent.error).toBeNull();
    const ids = sent.data!.data.map((d) => d.id);
    expect(await store.incoming.waiting(p.creds.team_id, 10)).toEqual([{ team: p.creds.team_id, id: ids[0]! }]);
    expect(await store.emails.get(p.creds.team_id, ids[1]!)).toBeUndefined();

    const got = await p.api('GET', `/emails/${ids[1]}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: ids[1], to: ['b@dest.test'], last_event: 'queued', queue: { recipients: ['b@dest.test'] } });
    expect(await store.incoming.count()).toBe(0);
    for (const id of ids) expect((await store.queue.entriesOf(p.creds.team_id, id)).length).toBe(1);
    const events = await p.api('GET', `/emails/${ids[2]}/events`);
    expect(events.body.data.map((e: { type: string }) => e.type)).toEqual(['email.queued']);
  });

  test('the list shows a batch still waiting, newest first', async () => {
    const sent = await p.resend.batch.send([mail('d@dest.test'), mail('e@dest.test')]);
    const ids = sent.data!.data.map((d) => d.id);
    expect(await p.svc.store.incoming.count()).toBe(1);
    const list = await p.api('GET', '/emails?limit=2');
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([ids[1], ids[0]]);
    expect(await p.svc.store.incoming.count()).toBe(0);
  });

  test('taken by several at once, a request is written once', async () => {
    const { store, events } = p.svc;
    const sent = await p.resend.batch.send([mail('f@dest.test'), mail('g@dest.test'), mail('h@third.test')]);
    const ids = sent.data!.data.map((d) => d.id);
    await Promise.all([settle(store, events, p.creds.team_id), settle(store, events, p.creds.team_id), settle(store, events, p.creds.team_id)]);
    for (const id of ids) {
      expect((await store.queue.entriesOf(p.creds.team_id, id)).length).toBe(1);
      const log = await p.api('GET', `/emails/${id}/events`);
      expect(log.body.data).toHaveLength(1);
    }
  });

  test('the suppression list is read when the request is written: an address suppressed meanwhile is skipped', async () => {
    const sent = await p.resend.batch.send([mail('late@dest.test'), mail('kept@dest.test')]);
    const ids = sent.data!.data.map((d) => d.id);
    // This read writes the request first, so add the suppression behind the API's back, as another node would.
    await p.svc.store.write((tx) => suppress(p.svc.events, tx, p.creds.team_id, 'late@dest.test', 'manual'));
    expect((await p.api('GET', `/emails/${ids[0]}`)).body.last_event).toBe('suppressed');
    expect((await p.api('GET', `/emails/${ids[1]}`)).body.last_event).toBe('queued');
  });

  test('an idempotent replay while the request waits answers the same ids, and adds nothing', async () => {
    const headers = { 'idempotency-key': 'incoming-replay' };
    const first = await p.api('POST', '/emails/batch', { body: [mail('i@dest.test')], headers });
    const again = await p.api('POST', '/emails/batch', { body: [mail('i@dest.test')], headers });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await p.svc.store.incoming.count()).toBe(1);
  });

  test('attachments over the queue record’s bound: written as emails at once, their files staged', async () => {
    const big = Buffer.alloc(INCOMING_FILE_BYTES + 1, 7).toString('base64');
    const before = await p.svc.store.incoming.count();
    const sent = await p.resend.batch.send([mail('j@dest.test', { attachments: [{ filename: 'big.bin', content: big }] }), mail('k@dest.test')]);
    expect(sent.error).toBeNull();
    expect(await p.svc.store.incoming.count()).toBe(before);
    for (const { id } of sent.data!.data) expect(await p.svc.store.emails.get(p.creds.team_id, id)).toBeDefined();
  });

  test('a request a stop left waiting is written at the next start', async () => {
    const sent = await p.resend.batch.send([mail('l@dest.test'), mail('m@dest.test')]);
    const ids = sent.data!.data.map((d) => d.id);
    const team = p.creds.team_id;
    expect(await p.svc.store.incoming.count()).toBeGreaterThan(0);
    await p.stop();
    p = await startPosthorn({ data_dir: dataDir, 'delivery.sandbox': false });
    await p.svc.backOffice.idle('incoming');
    expect(await p.svc.store.incoming.count()).toBe(0);
    // Queued (delivery may have tried them since).
    for (const id of ids) expect((await p.svc.store.emails.get(team, id))?.queued_at).toBeString();
  });
});
