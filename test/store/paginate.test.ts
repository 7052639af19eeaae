// The pagination engine against the real store: every rule of docs/api.md §4.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type EmailRec, type ReceivedEmailRec, type Store, type SegmentRec, type PageQuery } from '../../src/store';
import { newId, nowIso } from '../../src/ids';
import { paginate, sortedSource, withDerived } from '../../src/store/paginate';

let dir: string;
let store: Store;
const TEAM = newId();
const OTHER = newId();
let ids: string[] = []; // oldest first

const seg = (team: string): SegmentRec => ({ id: newId(), team_id: team, created_at: nowIso(), name: 'x' });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'posthorn-page-'));
  store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  await store.write(async (tx) => {
    for (let i = 0; i < 25; i++) {
      const r = seg(TEAM);
      ids.push(r.id);
      tx.segments.put(r);
      tx.segments.put(seg(OTHER)); // interleaved records of another team never leak in
    }
  });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const page = (q: PageQuery, def: number | null = null) => store.segments.page(TEAM, q, def, (r) => r.id);

describe('pagination engine', () => {
  test('no limit returns everything newest first when the list has no default', async () => {
    const p = await page({});
    expect(p.has_more).toBe(false);
    expect(p.data).toEqual([...ids].reverse());
  });

  test('default page size applies when the list has one', async () => {
    const p = await page({}, 20);
    expect(p.data.length).toBe(20);
    expect(p.has_more).toBe(true);
  });

  test('limit pages forward with after, excluding the cursor, until has_more is false', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const p = await page({ limit: 7, after });
      seen.push(...p.data);
      if (!p.has_more) break;
      after = p.data[p.data.length - 1];
    }
    expect(seen).toEqual([...ids].reverse());
  });

  test('before pages backwards, newest first within the page', async () => {
    const p = await page({ limit: 3, before: ids[10] });
    expect(p.data).toEqual([ids[13], ids[12], ids[11]]);
    expect(p.has_more).toBe(true);
    const top = await page({ limit: 5, before: ids[21] });
    expect(top.data).toEqual([ids[24], ids[23], ids[22]]);
    expect(top.has_more).toBe(false);
  });

  test('a cursor that no longer exists still positions the page', async () => {
    const gone = ids[12];
    await store.write(async (tx) => tx.segments.remove(TEAM, gone));
    expect((await page({ limit: 2, after: gone })).data).toEqual([ids[11], ids[10]]);
    expect((await page({ limit: 2, before: gone })).data).toEqual([ids[14], ids[13]]);
    ids = ids.filter((i) => i !== gone);
  });

  test('paging stays stable while items are inserted and deleted concurrently', async () => {
    const expected = new Set(ids);
    const seen: string[] = [];
    let after: string | undefined;
    const churn: Promise<unknown>[] = [];
    for (;;) {
      const p = await page({ limit: 4, after });
      seen.push(...p.data);
      // Between pages: new items arrive (newer than every cursor) and an unseen old one is deleted.
      churn.push(store.write(async (tx) => tx.segments.put(seg(TEAM))));
      const victim = ids.find((i) => !seen.includes(i) && expected.has(i));
      if (victim) {
        expected.delete(victim);
        churn.push(store.write(async (tx) => tx.segments.remove(TEAM, victim)));
      }
      await Promise.all(churn);
      if (!p.has_more) break;
      after = p.data[p.data.length - 1];
    }
    // No duplicates, nothing newer than the first page leaks in, nothing that survived is skipped.
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((i) => expected.has(i))).toEqual([...expected].sort().reverse());
  });

  test('an empty collection pages to an empty list', async () => {
    expect(await store.segments.page(newId(), { limit: 10 }, 20)).toEqual({ has_more: false, data: [] });
  });
});

describe('derived items among stored ones', () => {
  test('every page, either way, is the page of all of them stored together', () => {
    const ids = Array.from({ length: 6 }, () => newId());
    for (let d = 0; d < ids.length; d++) {
      const derived = [{ id: ids[d]! }];
      const stored = sortedSource(ids.filter((_, i) => i !== d).map((id) => ({ id })));
      const together = sortedSource(ids.map((id) => ({ id })));
      const load = (_k: unknown, v: unknown) => v as { id: string };
      for (const limit of [1, 2, 3, 10])
        for (const q of [
          { limit },
          ...ids.flatMap((c) => [
            { limit, after: c },
            { limit, before: c },
          ]),
        ]) {
          const got = withDerived(paginate(stored, [], q, null, load), derived, q, null, (x) => x.id);
          expect(got).toEqual(paginate(together, [], q, null, load));
        }
    }
  });
});

describe('retention sweep', () => {
  test('removes records older than retention.days, and only those', async () => {
    // Ids are UUIDv7 made at creation (the sweep walks them): an old record has an old id.
    const then = Date.now() - 40 * 86_400_000;
    const old = { id: Bun.randomUUIDv7('hex', then), team_id: TEAM, created_at: new Date(then).toISOString() };
    const fresh = { id: newId(), team_id: TEAM, created_at: nowIso() };
    const base = {
      api_key_id: 'k',
      endpoint: '/x',
      method: 'GET',
      response_status: 200,
      user_agent: null,
      duration_ms: 1,
      request_json: null,
      response_json: null,
    };
    await store.write(async (tx) => {
      tx.logs.put({ ...old, ...base });
      tx.logs.put({ ...fresh, ...base });
    });
    expect(await store.sweep()).toBe(1);
    expect(await store.logs.get(TEAM, old.id)).toBeUndefined();
    expect((await store.logs.get(TEAM, fresh.id))?.id).toBe(fresh.id);
    expect(await store.sweep(Date.now() + 31 * 86_400_000)).toBe(1);
    expect(await store.logs.get(TEAM, fresh.id)).toBeUndefined();
  });

  test('emails are walked team by team; one scheduled beyond its creation is kept until its own expiry', async () => {
    const DAY = 86_400_000;
    const teams = [newId(), newId(), newId()];
    const email = (team: string, createdAgo: number, scheduledIn: number | null) => {
      const created = Date.now() - createdAgo * DAY;
      return {
        id: Bun.randomUUIDv7('hex', created),
        team_id: team,
        created_at: new Date(created).toISOString(),
        scheduled_at: scheduledIn === null ? null : new Date(created + scheduledIn * DAY).toISOString(),
      } as unknown as EmailRec;
    };
    const gone = teams.map((t) => email(t, 31, null));
    const kept = [email(teams[0]!, 10, null), email(teams[1]!, 31, 20), email(teams[2]!, 29, null)];
    await store.write(async (tx) => {
      for (const e of [...gone, ...kept]) tx.emails.put(e);
    });
    expect(await store.sweep()).toBe(3);
    for (const e of gone) expect(await store.emails.get(e.team_id, e.id)).toBeUndefined();
    for (const e of kept) expect((await store.emails.get(e.team_id, e.id))?.id).toBe(e.id);
    // 31 days after the scheduled send, that one goes too.
    expect(await store.sweep(Date.now() + 21 * DAY)).toBe(3);
  });

  test("per-email metric counters go team by team once their hour is past the emails' retention, with no TTL row each", async () => {
    const DAY = 86_400_000;
    const teams = [newId(), newId()];
    const dims = (email: string) => ({ domain_id: 'd', broadcast_id: null, email_id: email });
    const old = newId();
    const recent = newId();
    await store.write(async (tx) => {
      for (const team of teams) {
        tx.metrics.add(team, Date.now() - 31 * DAY, dims(old), { sent: 1 });
        tx.metrics.add(team, Date.now() - 29 * DAY, dims(recent), { sent: 1 });
      }
    });
    const emailsOf = async (team: string) => {
      const ids: string[] = [];
      await store.metrics.scanEmails(team, 0, Date.now(), (b) => ids.push(b.email_id));
      return ids;
    };
    await store.sweep();
    for (const team of teams) expect(await emailsOf(team)).toEqual([recent]);
    await store.sweep(Date.now() + 2 * DAY);
    for (const team of teams) expect(await emailsOf(team)).toEqual([]);
  });

  test('received emails are swept by id with their content, no TTL row each', async () => {
    const DAY = 86_400_000;
    const team = newId();
    const at = (ago: number) => {
      const t = Date.now() - ago * DAY;
      return { id: Bun.randomUUIDv7('hex', t), team_id: team, created_at: new Date(t).toISOString() } as unknown as ReceivedEmailRec;
    };
    const old = at(31);
    const fresh = at(1);
    await store.write(async (tx) => {
      for (const r of [old, fresh]) {
        tx.receivedEmails.put(r);
        tx.receivedContent.put(team, r.id, { raw: new Uint8Array([1]), html: null, text: 'x', headers: {}, files: {} });
      }
    });
    await store.sweep();
    expect(await store.receivedEmails.get(team, old.id)).toBeUndefined();
    expect(await store.receivedContent.get(team, old.id)).toBeUndefined();
    expect((await store.receivedEmails.get(team, fresh.id))?.id).toBe(fresh.id);
    expect((await store.receivedContent.get(team, fresh.id))?.text).toBe('x');
  });

  test('an email keeps its broadcast index through updates that read nothing first', async () => {
    const team = newId();
    const broadcast = newId();
    const e = { id: newId(), team_id: team, created_at: nowIso(), scheduled_at: null, broadcast_id: broadcast, last_event: 'queued' } as unknown as EmailRec;
    await store.write(async (tx) => {
      tx.emails.put(e);
      tx.emails.put({ ...e, last_event: 'sent' });
    });
    await store.write(async (tx) => tx.emails.put({ ...e, last_event: 'delivered' }));
    const found = await store.emails.findAll('broadcast', broadcast, team);
    expect(found.map((x) => [x.id, x.last_event])).toEqual([[e.id, 'delivered']]);
    await store.write(async (tx) => tx.emails.remove(team, e.id));
    expect(await store.emails.findAll('broadcast', broadcast, team)).toEqual([]);
  });

  test("a TTL row of an email written before emails were swept by id deletes it only once the email's own expiry has come", async () => {
    const DAY = 86_400_000;
    // An email created 31 days ago, since rescheduled to send in 10 days: kept for 30 days after that.
    const created = Date.now() - 31 * DAY;
    const e = {
      id: Bun.randomUUIDv7('hex', created),
      team_id: newId(),
      created_at: new Date(created).toISOString(),
      scheduled_at: new Date(Date.now() + 10 * DAY).toISOString(),
    } as unknown as EmailRec;
    // What an earlier version left: a TTL row at the expiry the email had then (30 days after creation).
    const ttl = (store as unknown as { ttl: import('../../src/store/lmdb/ttl').TtlIndex }).ttl;
    await store.write(async (tx) => {
      tx.emails.put(e);
      ttl.add('emails', [e.team_id, e.id], created + 30 * DAY);
    });
    await store.sweep();
    expect((await store.emails.get(e.team_id, e.id))?.id).toBe(e.id);
    // Its own time: 30 days after the scheduled send.
    await store.sweep(Date.now() + 41 * DAY);
    expect(await store.emails.get(e.team_id, e.id)).toBeUndefined();
  });
});
