// throwaway: cost of writing incoming requests as emails, in-process (not committed)
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { openStore } from '../../src/store';
import { createEvents } from '../../src/events/webhooks';
import { expand } from '../../src/sending/incoming';
import { newId, nowIso } from '../../src/ids';
import type { IncomingRec, EmailRec } from '../../src/store';

const dir = mkdtempSync(join(tmpdir(), 'xexp-'));
const store = await openStore({ dataDir: dir, databaseUrl: null, retentionDays: 30, holdMs: 86_400_000, region: null });
const events = createEvents();
const team = newId();
await store.write(async (tx) => tx.teams.put({ id: team, team_id: team, created_at: nowIso(), name: 't' } as never));
const domainId = newId();
let seq = 0;
function rec(): IncomingRec {
  const emails = Array.from({ length: 100 }, () => {
    const id = newId();
    const n = ++seq;
    const to = `user${n}@dest.test`;
    const email: EmailRec = {
      id, team_id: team, created_at: nowIso(), from: 'Bench <bench@bench1.test>', from_address: 'bench@bench1.test', domain_id: domainId, domain: 'bench1.test',
      to: [to], cc: [], bcc: [], reply_to: [], subject: `Hello ${n}`, headers: {}, tags: [], scheduled_at: null, last_event: 'queued',
      message_id: `<${id}@bench1.test>`, broadcast_id: null, contact_id: null, topic_id: null, attachments: [], recipients: { [to]: 'pending' }, sent_at: null, api_key_id: newId(),
    } as EmailRec;
    const content = { html: `<p>Hello number ${n}, this is a benchmark email.</p>`, text: `Hello number ${n}, this is a benchmark email.`, files: {}, message: { from: { name: 'Bench', address: 'bench@bench1.test' }, to: [{ name: '', address: to }], cc: [], reply_to: [], tracking: { open: false, click: false } } };
    return { email, content } as IncomingRec['emails'][number];
  });
  return { id: emails[0]!.email.id, team_id: team, created_at: nowIso(), sandbox: false, emails };
}
const N = Number(process.argv[2] ?? 100);
const group = Number(process.argv[3] ?? 8);
for (let i = 0; i < N; i += 20) await store.write(async (tx) => { for (let j = 0; j < 20; j++) tx.incoming.add(rec()); });
const keys = await store.incoming.waiting(null, N);
const prof = process.argv[4] === 'prof';
const { profile } = await import('bun:jsc');
const run = async () => { for (let i = 0; i < keys.length; i += group) await expand(store, events, keys.slice(i, i + group)); };
const t0 = performance.now();
const c0 = process.cpuUsage();
if (prof) {
  const r = await profile(run, 500);
  mkdirSync('/tmp/xb', { recursive: true });
  writeFileSync('/tmp/xb/backoffice-1.json', JSON.stringify({ thread: 'backoffice', wallMs: performance.now() - t0, stackTraces: r.stackTraces }));
} else await run();
const c = process.cpuUsage(c0);
const ms = performance.now() - t0;
console.log(`${N * 100} emails in ${ms.toFixed(0)} ms: ${(N * 100 / (ms / 1000)).toFixed(0)} emails/s; CPU ${((c.user + c.system) / (N * 100)).toFixed(1)} µs/email (user ${(c.user / (N * 100)).toFixed(1)}, sys ${(c.system / (N * 100)).toFixed(1)})`);
await store.close();
rmSync(dir, { recursive: true, force: true });
