// What the HTTP thread (host.ts) and the back office's thread (thread.ts) say to each other.
import type { Config } from '../config';
import type { Signal } from '../store';

export type ToThread =
  | { t: 'init'; config: Config; quiet: boolean }
  | { t: 'kick'; signal: Signal }
  | { t: 'idle'; id: number; what: 'delivery' | 'webhooks' }
  | { t: 'counts'; id: number }
  | { t: 'stop'; graceMs: number };

export type FromThread =
  | { t: 'ready' }
  | { t: 'failed'; error: string }
  | { t: 'reply'; id: number; value: unknown }
  | { t: 'stopped' };
