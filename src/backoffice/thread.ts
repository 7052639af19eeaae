// The back office's thread (parts.ts): a Worker started by host.ts. It opens the store itself —
// LMDB shares one environment between the threads of a process — and answers the host's messages:
// `init` (the configuration), `kick` (the other thread committed work of this kind), `idle` and
// `counts` (questions, answered by id), `stop` (finish, close the store, say `stopped`).
import type { Config } from '../config';
import { openStore, storeOptions, SIGNALS, type Signal, type Store } from '../store';
import { log, setQuiet, setSink } from '../log';
import { createBackOffice, type BackOffice } from './parts';
import { keepMemoryTidy } from '../limits/memory';
import { yieldToListeners } from './priority';
import type { ToThread, FromThread } from './messages';
import { profileThisThreadIfAsked } from '../bench-profile';

declare const self: Worker;

profileThisThreadIfAsked('backoffice');

let store: Store | null = null;
let office: BackOffice | null = null;

const send = (m: FromThread) => self.postMessage(m);
// Log lines are written by the main thread.
setSink((line) => send({ t: 'log', line }));

self.onmessage = (e: MessageEvent<ToThread>) => {
  const m = e.data;
  switch (m.t) {
    case 'init':
      void init(m.config, m.quiet);
      break;
    case 'kick':
      kick(m.signal);
      break;
    case 'idle':
      void office?.[m.what].idle().then(() => send({ t: 'reply', id: m.id, value: null }));
      break;
    case 'counts':
      send({ t: 'reply', id: m.id, value: [...(office?.counts.snapshot() ?? [])] });
      break;
    case 'stop':
      void stop(m.graceMs);
      break;
    case 'quiet':
      setQuiet(m.quiet);
      break;
  }
};

function kick(signal: Signal): void {
  office?.[SIGNALS[signal]].kick();
}

async function init(config: Config, quiet: boolean): Promise<void> {
  setQuiet(quiet);
  // Before anything starts: the signing threads this thread starts inherit its priority.
  yieldToListeners();
  try {
    store = await openStore(storeOptions(config));
    // The dashboard's live stream is on the HTTP thread: an embedded store's changes are told to
    // it here (PostgreSQL's NOTIFY carries them there itself, store/pg/signals.ts).
    if (!store.hearsOthers) store.onChange((changes) => send({ t: 'changes', changes }));
    office = createBackOffice(config, store);
    await office.start();
    // This thread's heap is its own: its garbage (messages composed, signed, sent) is collected here.
    keepMemoryTidy();
    send({ t: 'ready' });
  } catch (e) {
    send({ t: 'failed', error: String((e as Error)?.stack ?? e) });
  }
}

async function stop(graceMs: number): Promise<void> {
  try {
    await office?.stop(graceMs);
    await store?.close();
  } catch (e) {
    log.error('backoffice.stop_failed', { error: String((e as Error)?.stack ?? e) });
  }
  send({ t: 'stopped' });
}
