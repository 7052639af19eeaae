// The embedded queue's one index (store/lmdb/queue.ts): `queue.by_destination` finds a team's
// entries to a destination and, through the domains of the email's recipients, an email's entries;
// a queue stored with the earlier index by email is re-indexed once at open.
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type EmailRec, type QueueEntry, type Store } from '../../src/store';
import { ENCODING, LmdbEnv } from '../../src/store/lmdb/env';
import { newId } from '../../src/ids';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-lmdb-queue-'));
  dirs.push(dir);
  return dir;
}
const open = (dir: string) => openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });

const team = newId();
function email(recipients: string[]): EmailRec {
  return { id: newId(), team_id: team, recipients: Object.fromEntries(recipients.map((r) => [r, 'pending'])) } as unknown as EmailRec;
}
function entry(e: EmailRec, domain: string, recipients: string[]): QueueEntry {
  return { id: newId(), team_id: team, email_id: e.id, domain, recipients, attempts: 0, first_attempt_at: null, last_error: null };
}

test("an email's entries are found through its recipients' domains, and no other email's", async () => {
  const store = await open(dataDir());
  const a = email(['one@a.test', 'two@b.test', 'bounced@resend.dev']);
  const b = email(['three@a.test']);
  // Two entries of `a` to one domain (a sandbox address's apart from the others, enqueue.ts).
  const entries = [
    entry(a, 'a.test', ['one@a.test']),
    entry(a, 'b.test', ['two@b.test']),
    entry(a, 'resend.dev', ['bounced@resend.dev']),
    entry(b, 'a.test', ['three@a.test']),
  ];
  const sandboxTwin = entry(a, 'a.test', ['one@a.test']);
  await store.write(async (tx) => {
    tx.emails.put(a);
    tx.emails.put(b);
    for (const e of [...entries, sandboxTwin]) tx.queue.add(e, 1000);
  });
  const ids = (list: QueueEntry[]) => list.map((e) => e.id);
  expect(ids(await store.queue.entriesOf(team, a.id))).toEqual(ids([entries[0]!, entries[1]!, entries[2]!, sandboxTwin]).sort());
  expect(ids(await store.queue.entriesOf(team, b.id))).toEqual([entries[3]!.id]);
  // Moved and removed through the index: an entry is found where it is now, and gone once removed.
  await store.write(async (tx) => {
    tx.queue.put({ ...entries[1]!, attempts: 1 }, 5000);
    tx.queue.remove(entries[0]!);
  });
  const after = await store.queue.entriesOf(team, a.id);
  expect(ids(after)).toEqual(ids([entries[1]!, entries[2]!, sandboxTwin]).sort());
  expect(after.find((e) => e.id === entries[1]!.id)?.attempts).toBe(1);
  expect((await store.queue.ofTeam(team, { limit: 10, destination: 'b.test' }))[0]!.due).toBe(5000);
  // A page of a destination's entries continues after the last one of the previous page.
  const first = await store.queue.ofTeam(team, { limit: 1, destination: 'a.test' });
  const rest = await store.queue.ofTeam(team, { limit: 10, destination: 'a.test', after: first.at(-1)!.entry });
  expect([...first, ...rest].map((q) => q.entry.id).sort()).toEqual(ids([entries[3]!, sandboxTwin]).sort());
  await store.close();
});

test('a queue stored with the index by email is indexed by destination alone once opened', async () => {
  const dir = dataDir();
  const a = email(['one@a.test', 'two@b.test']);
  const entries = [entry(a, 'a.test', ['one@a.test']), entry(a, 'b.test', ['two@b.test'])];
  let store: Store = await open(dir);
  await store.write(async (tx) => tx.emails.put(a));
  await store.close();
  // The layout before: [team, email, entry] → [due, domain] and [team, domain, entry] → due.
  const env = new LmdbEnv(dir);
  const old = env.root.openDB({ name: 'queue.by_email', ...ENCODING });
  await env.transaction(() => {
    for (const e of entries) {
      env.db('queue').put([7, e.domain, e.id], e);
      old.put([team, e.email_id, e.id], [7, e.domain]);
      env.db('queue.by_destination').put([team, e.domain, e.id], 7);
    }
  });
  await env.close();

  store = await open(dir);
  expect((await store.queue.entriesOf(team, a.id)).map((e) => e.id)).toEqual(entries.map((e) => e.id).sort());
  expect((await store.queue.ofTeam(team, { limit: 10 })).map((q) => [q.entry.domain, q.due])).toEqual([
    ['a.test', 7],
    ['b.test', 7],
  ]);
  await store.write(async (tx) => tx.queue.remove(entries[0]!));
  expect((await store.queue.entriesOf(team, a.id)).map((e) => e.id)).toEqual([entries[1]!.id]);
  await store.close();
  const after = new LmdbEnv(dir);
  expect(after.root.doesExist('queue.by_email')).toBe(false);
  await after.close();
});
