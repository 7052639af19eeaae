// "A message joined a thread": the point the Inbox Agent (and anything else that reacts to new mail
// in an inbox) listens at. Told once the unit of work that added the message has committed, on the
// thread that committed it (the back office's for inbound mail, the main thread's for mail sent from
// an inbox); a listener that throws is logged and never undoes or blocks the intake.
import { log } from '../log';
import type { ThreadSearch } from './search-index';

export interface ThreadMessageAdded {
  team: string;
  inbox_id: string;
  thread_id: string;
  message_id: string;
  direction: 'inbound' | 'outbound';
  /** The message started the thread. */
  new_thread: boolean;
}

export type ThreadMessageListener = (ev: ThreadMessageAdded) => void | Promise<void>;

export class ThreadMessageHooks {
  private readonly listeners: ThreadMessageListener[] = [];

  /** Be told of every message added to a thread, after its commit. */
  on(fn: ThreadMessageListener): void {
    this.listeners.push(fn);
  }

  emit(ev: ThreadMessageAdded): void {
    for (const fn of this.listeners) {
      try {
        const p = fn(ev);
        if (p) p.catch((e: unknown) => log.warn('inboxes.listener_failed', { thread_id: ev.thread_id, error: String(e) }));
      } catch (e) {
        log.warn('inboxes.listener_failed', { thread_id: ev.thread_id, error: String(e) });
      }
    }
  }
}

/** What adding a message to a thread tells besides the store, made once per thread by its composition root. */
export interface InboxListeners {
  hooks: ThreadMessageHooks;
  search: ThreadSearch;
}
