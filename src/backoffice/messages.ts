// What the HTTP thread (host.ts) and the back office's thread (thread.ts) say to each other.
import type { Config } from '../config';
import type { Change, Signal, SIGNALS } from '../store';

/** The back office's workers, which the host may ask to be idle: one per store signal, which wakes it. */
export type Worker = (typeof SIGNALS)[Signal];

export type ToThread =
  | { t: 'init'; config: Config; quiet: boolean }
  | { t: 'kick'; signal: Signal }
  | { t: 'idle'; id: number; what: Worker }
  | { t: 'counts'; id: number }
  | { t: 'stop'; graceMs: number }
  | { t: 'quiet'; quiet: boolean };

export type FromThread =
  | { t: 'ready' }
  | { t: 'failed'; error: string }
  | { t: 'reply'; id: number; value: unknown }
  | { t: 'stopped' }
  | { t: 'log'; line: string }
  /** Changes this thread committed, for the live stream (events/live.ts), when the store does not carry them itself. */
  | { t: 'changes'; changes: readonly Change[] };
