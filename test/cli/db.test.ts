// Cluster mode's commands as a user runs them (child processes of `bun src/main.ts`):
// `posthorn migrate` and `posthorn db copy`, which moves an LMDB install into PostgreSQL — records,
// bodies (a large one kept in files by LMDB), work in progress, idempotency keys, counters and the
// install's secrets, so that a link signed before the move still opens after it.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPosthorn } from '../helpers/posthorn';
import { startMailWorld } from '../helpers/world';
import { postgres } from '../helpers/postgres';

const MAIN = join(import.meta.dir, '../../src/main.ts');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([process.execPath, MAIN, ...args], { env: { ...process.env, POSTHORN_LOG: 'silent', ...env } });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

describe('posthorn migrate', () => {
  test('without database.url: refused, naming the key', () => {
    const r = run(['migrate'], { POSTHORN_DATABASE_URL: '' });
    expect(r.code).toBe(78);
    expect(r.err).toContain('database.url');
  });

  test('brings a new database to the current schema; a second run has nothing to do', async () => {
    const url = await (await postgres()).database();
    const first = run(['migrate'], { POSTHORN_DATABASE_URL: url });
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/schema is at version \d+ \(was 0\)/);
    const again = run(['migrate'], { POSTHORN_DATABASE_URL: url });
    expect(again.out).toMatch(/schema is at version \d+, nothing to do/);
  });

  test("backup in cluster mode points to the database's own tools", async () => {
    const r = run(['backup', join(tmpdir(), 'never.mdb')], { POSTHORN_DATABASE_URL: await (await postgres()).database() });
    expect(r.code).toBe(1);
    expect(r.err).toContain('pg_dump');
  });
});

describe('posthorn db copy', () => {
  test('an LMDB install moves to PostgreSQL and serves as before', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-copy-'));
    dirs.push(dataDir);
    // The LMDB install: example.test verified, contacts in a segment, delivered and scheduled mail
    // (one with a 300 KB attachment: kept in a file by LMDB), an idempotent send.
    const world = await startMailWorld({ data_dir: dataDir, 'database.url': null });
    const before = world.p;
    const key = before.apiKey;
    const segment = (await before.api('POST', '/segments', { body: { name: 'all' } })).body;
    const contacts: string[] = [];
    for (let i = 0; i < 5; i++)
      contacts.push((await before.api('POST', '/contacts', { body: { email: `c${i}@example.test`, segments: [{ id: segment.id }] } })).body.id);
    const big = Buffer.alloc(300 * 1024, 7).toString('base64');
    const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      before.api('POST', '/emails', { body: { from: 'a@example.test', to: 'r@dest.test', text: 'x', ...body }, headers });
    const withFile = (await send({ subject: 'big', attachments: [{ filename: 'big.bin', content: big }] })).body.id;
    const idem = await send({ subject: 'once' }, { 'idempotency-key': 'k-1' });
    const scheduled = (await send({ subject: 'later', scheduled_at: new Date(Date.now() + 86_400_000).toISOString() })).body.id;
    await world.sink.waitFor(2);
    const attachments = (await before.api('GET', `/emails/${withFile}/attachments`)).body.data;
    const signedBefore: string = attachments[0].download_url;
    await before.svc.backOffice.idle('delivery');
    const emailBefore = (await before.api('GET', `/emails/${withFile}`)).body;
    expect(emailBefore.last_event).toBe('delivered');
    await world.stop();

    const pg = await postgres();
    const url = await pg.database('copy');
    const copy = run(['db', 'copy', '--from', dataDir], { POSTHORN_DATABASE_URL: url });
    expect(copy.err).toBe('');
    expect(copy.code).toBe(0);
    expect(copy.out).toMatch(/record\s+\d+/);
    expect(copy.out).toMatch(/content\s+\d+/);
    // Into a database that already holds an install: refused, nothing changed.
    const twice = run(['db', 'copy', '--from', dataDir], { POSTHORN_DATABASE_URL: url });
    expect(twice.code).not.toBe(0);
    expect(twice.err).toContain('already holds');

    const after = await startPosthorn({ 'database.url': url, public_url: new URL(signedBefore).origin });
    try {
      const as = { key };
      expect((await after.api('GET', `/emails/${withFile}`, as)).body).toEqual(emailBefore);
      expect((await after.api('GET', `/segments/${segment.id}/contacts`, as)).body.data.map((c: { id: string }) => c.id).sort()).toEqual([...contacts].sort());
      expect((await after.api('GET', `/emails/${scheduled}`, as)).body.last_event).toBe('scheduled');
      // The idempotency key still holds: the same request answers the first one's id.
      const replay = await after.api('POST', '/emails', {
        ...as,
        body: { from: 'a@example.test', to: 'r@dest.test', text: 'x', subject: 'once' },
        headers: { 'idempotency-key': 'k-1' },
      });
      expect(replay.body.id).toBe(idem.body.id);
      // The link signed by the LMDB install opens, with the bytes that were in its file.
      const download = await fetch(`${after.url}${new URL(signedBefore).pathname}${new URL(signedBefore).search}`);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(big, 'base64'))).toBe(true);
    } finally {
      await after.stop();
    }
  });
});
