// The dashboard's live stream in cluster mode (docs/api.md §19.15, README.md "Cluster mode"): two
// nodes on one PostgreSQL database. A session's stream on one node hears what the team changed
// through the other — an email sent there and delivered by either node's back office, a domain
// created there — carried by the store's NOTIFY (src/store/pg/signals.ts); another team's session
// hears none of it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { postgres } from '../helpers/postgres';
import { markVerified } from '../helpers/emails';
import { openLive, signIn, type LiveEvent } from '../helpers/live';
import { until } from '../helpers/wait';

const isChange = (topic: string, id: string) => (e: LiveEvent) => e.event === 'change' && e.data.topic === topic && e.data.id === id;

describe('two nodes on one database', () => {
  let a: Running;
  let b: Running;
  let url: string;
  beforeAll(async () => {
    const pg = await postgres();
    url = await pg.database('live');
    a = await startPosthorn({ 'database.url': url });
    b = await startPosthorn({ 'database.url': url });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await (await postgres()).drop(url);
  });

  test("a session on one node hears its team's changes made through the other, and no other team's", async () => {
    // Team A's session on node A; its key used on node B. Node B's own team is another team.
    const mine = await openLive(a.url, await signIn(a));
    const theirs = await openLive(a.url, await signIn(a, b.creds));
    try {
      const created = await b.api('POST', '/domains', { body: { name: 'live.test' }, key: a.apiKey });
      expect(created.status).toBe(201);
      await mine.seen(isChange('domain', created.body.id), 'the domain created on the other node');
      await markVerified(b, a.creds.team_id, created.body.id);
      const sent = await b.api('POST', '/emails', {
        key: a.apiKey,
        body: { from: 'hello@live.test', to: 'delivered@resend.dev', subject: 'Live', html: '<p>Hi</p>' },
      });
      expect(sent.status).toBe(200);
      const id = sent.body.id as string;
      await mine.seen(isChange('email', id), 'the email sent through the other node');
      await until(async () => (await a.api('GET', `/emails/${id}`)).body.last_event === 'delivered', 'delivery');
      // Queued, then sent and delivered by a back office (either node's): more than one change.
      await until(() => mine.events.filter(isChange('email', id)).length >= 2, 'the changes of its delivery');
      // Team B's session, which hears its own domain made after all that, heard nothing of team A.
      const own = await b.api('POST', '/domains', { body: { name: 'other-live.test' } });
      await theirs.seen(isChange('domain', own.body.id), "team B's own domain");
      expect(theirs.events.some((e) => e.data.id === id || e.data.id === created.body.id)).toBe(false);
    } finally {
      mine.close();
      theirs.close();
    }
  });
});
