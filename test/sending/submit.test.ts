// The sending core's commit: everything kept is written in one unit of work; what `keep` rejects
// (decided inside that transaction) is not written at all.
import { test, expect } from 'bun:test';
import { startPosthorn } from '../helpers/posthorn';
import { verifiedDomain } from '../helpers/emails';
import { prepare, commit } from '../../src/sending/submit';

test('commit writes the kept emails and nothing of the others', async () => {
  const p = await startPosthorn();
  try {
    await verifiedDomain(p, 'core.test');
    const ctx = { team: p.creds.team_id, key: null };
    const a = await prepare(p.svc, ctx, { from: 'a@core.test', to: 'x@dest.test', subject: 'kept', text: 't' });
    const b = await prepare(p.svc, ctx, { from: 'a@core.test', to: 'y@dest.test', subject: 'dropped', text: 't' });
    const saved = await commit(p.svc, [a, b], { keep: async (_tx, x) => x === a });
    expect(saved.map((e) => e.id)).toEqual([a.email.id]);
    expect((await p.svc.store.emails.get(ctx.team, a.email.id))?.last_event).toBe('queued');
    expect((await p.svc.store.emailContent.get(ctx.team, a.email.id))?.text).toBe('t');
    expect(await p.svc.store.queue.entriesOf(ctx.team, a.email.id)).toHaveLength(1);
    expect(await p.svc.store.emails.get(ctx.team, b.email.id)).toBeUndefined();
    expect(await p.svc.store.emailContent.get(ctx.team, b.email.id)).toBeUndefined();
    expect(await p.svc.store.queue.entriesOf(ctx.team, b.email.id)).toEqual([]);
  } finally {
    await p.stop();
  }
});

test('mail to a destination the team holds is queued held, out of the due range, at once', async () => {
  const p = await startPosthorn();
  try {
    await verifiedDomain(p, 'core.test');
    expect((await p.api('POST', '/queue/held.test/hold')).status).toBe(200);
    const ctx = { team: p.creds.team_id, key: null };
    const e = await prepare(p.svc, ctx, { from: 'a@core.test', to: ['x@held.test', 'y@open.test'], subject: 'held', text: 't' });
    await commit(p.svc, [e]);
    // Read at once, before the delivery thread's next claim could have held it there.
    const entries = await p.svc.store.queue.entriesOf(ctx.team, e.email.id);
    expect(entries.map((q) => [q.domain, q.held ?? null]).sort()).toEqual([
      ['held.test', 'destination'],
      ['open.test', null],
    ]);
  } finally {
    await p.stop();
  }
});
