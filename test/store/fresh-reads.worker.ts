// The other thread of fresh-reads.test.ts: commits one item due at 1000 ms to the named index,
// then wakes the test's thread, which is blocked meanwhile (so no tick passes there).
import { workerData } from 'node:worker_threads';
import { openStore, type Tx } from '../../src/store';
import { newId } from '../../src/ids';

declare const self: Worker;
const { dir, flag } = workerData as { dir: string; flag: Int32Array };
const store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
const team = newId();
const write: Record<string, (tx: Tx) => void> = {
  queue: (tx) =>
    tx.queue.add(
      {
        id: newId(),
        team_id: team,
        email_id: newId(),
        domain: 'fresh.test',
        recipients: ['a@fresh.test'],
        attempts: 0,
        first_attempt_at: null,
        last_error: null,
      },
      1_000,
    ),
  inboundSpool: (tx) =>
    tx.inboundSpool.add(
      {
        id: newId(),
        received_at: new Date().toISOString(),
        envelope: { mail_from: 'a@b.test', rcpt_to: ['c@fresh.test'] } as never,
        session_id: 's',
        inbound: [],
        reports: ['c@fresh.test'],
        size: 1,
        attempts: 0,
        attempting: false,
        error: null,
      },
      new Uint8Array([10]),
      1_000,
    ),
  outbox: (tx) => tx.outbox.put(team, newId(), 1_000, newId()),
  schedule: (tx) => tx.schedule.add(1_000, team, newId()),
};
self.onmessage = async (e: MessageEvent<string>) => {
  try {
    await store.write(async (tx) => write[e.data]!(tx));
  } catch (err) {
    self.postMessage(String(err));
  }
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
};
self.postMessage('ready');
