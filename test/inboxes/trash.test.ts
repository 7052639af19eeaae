// Emptying the trash (src/inboxes/trash.ts): a thread moved to the trash is deleted with its emails
// and drafts TRASH_DAYS later, not before; one taken out of the trash stays; moved back in, its clock
// starts again. The sweep is called with a later `now`, as the scheduler's hourly job calls it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { emptyTrash, TRASH_DAYS } from '../../src/inboxes/trash';
import { markVerified } from '../helpers/emails';
import { inboundProcessed, mta, type RunningSmtp } from '../helpers/smtp';
import { startMailWorld, type MailWorld } from '../helpers/world';

let w: MailWorld;
let s: RunningSmtp;
let inboxId: string;
const DAY = 86_400_000;
const removed: string[] = [];
const search = { remove: (_team: string, _inbox: string, thread: string) => removed.push(thread) };

beforeAll(async () => {
  w = await startMailWorld({}, { smtp: true });
  s = w.smtp!;
  const d = await s.p.api('POST', '/domains', { body: { name: 'trash.test', capabilities: { receiving: 'enabled' } } });
  await markVerified(s.p, s.p.creds.team_id, d.body.id);
  inboxId = (await s.p.resend.inboxes.create({ emailAddress: 'help@trash.test', name: 'Help' })).data!.id;
});
afterAll(async () => {
  await w.stop();
});

async function thread(subject: string): Promise<string> {
  const t = mta(s.starttls);
  try {
    await t.sendMail({
      envelope: { from: 'ann@dest.test', to: ['help@trash.test'] },
      from: 'ann@dest.test',
      to: 'help@trash.test',
      subject,
      text: subject,
    } as never);
    await inboundProcessed(s.p);
  } finally {
    t.close();
  }
  const list = await s.p.resend.inboxes.threads.list({ inboxId });
  return list.data!.data.find((x) => x.subject === subject)!.id;
}

const folder = (threadId: string, f: 'inbox' | 'trash') => s.p.resend.inboxes.threads.update({ inboxId, threadId, folder: f });
const exists = async (threadId: string) => (await s.p.resend.inboxes.threads.get({ inboxId, threadId })).error === null;

describe('the trash', () => {
  test(`keeps a thread ${TRASH_DAYS} days, then deletes it with its emails and drafts`, async () => {
    const kept = await thread('Rescued');
    const gone = await thread('Discarded');
    const untouched = await thread('Still open');
    await s.p.resend.inboxes.drafts.create({ inboxId, threadId: gone, text: 'never sent' } as never);
    expect((await folder(gone, 'trash')).error).toBeNull();
    expect((await folder(kept, 'trash')).error).toBeNull();
    expect((await folder(kept, 'inbox')).error).toBeNull();
    const store = s.p.svc.store;
    const emails = (await store.inboxMessages.findAll('thread', gone, s.p.creds.team_id)).length;
    expect(emails).toBe(1);

    expect(await emptyTrash(store, search, Date.now() + (TRASH_DAYS - 1) * DAY)).toBe(0);
    expect(await exists(gone)).toBe(true);

    expect(await emptyTrash(store, search, Date.now() + TRASH_DAYS * DAY + 60_000)).toBe(1);
    expect(removed).toEqual([gone]);
    expect(await exists(gone)).toBe(false);
    expect(await store.inboxMessages.findAll('thread', gone, s.p.creds.team_id)).toEqual([]);
    expect(await store.inboxDrafts.findAll('thread', gone, s.p.creds.team_id)).toEqual([]);
    expect(await exists(kept)).toBe(true);
    expect(await exists(untouched)).toBe(true);
  }, 60_000);
});
