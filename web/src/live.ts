// The page's one subscription to the session's live stream (docs/api.md §19.15): opened when the
// first page listens, read as server-sent events (HTML §9.2) through `openStream` — a fetch, as
// every request, with the CSRF header — and opened again after a `resync`, an end or a network
// failure, waiting a little longer each time. After any gap every listener reloads: what changed
// meanwhile was not heard. Pages call `useLive` with the topics they show and their reload.
import { useEffect, useRef } from 'preact/hooks';
import type { ChangeTopic } from '../../src/store/collections';
import { ApiFailure, openStream, quiet, signedIn } from './api';

export type { ChangeTopic };

/** A change heard, or null: reload everything (a resync or a reconnection). */
export type LiveChange = { topic: ChangeTopic; id: string | null } | null;

const listeners = new Set<(c: LiveChange) => void>();
let running: AbortController | null = null;
let failures = 0;

function dispatch(c: LiveChange): void {
  for (const l of [...listeners]) l(c);
}

/** Read the stream until it ends; resolves true when it should be opened again. */
async function readOnce(abort: AbortController): Promise<boolean> {
  let res: Response;
  try {
    res = await openStream('/auth/session/events', abort);
  } catch (e) {
    // Signed out (the API module sends the page to the sign-in form) or refused: stop.
    return !(e instanceof ApiFailure && e.status >= 400 && e.status < 500);
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return true;
      buf += value;
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === 'ready') {
          failures = 0;
          // What changed before this connection (the page loading, a gap) was not heard.
          dispatch(null);
        } else if (event === 'change' && data) dispatch(JSON.parse(data));
        else if (event === 'resync') dispatch(null);
      }
    }
  } catch {
    return !abort.signal.aborted;
  }
}

/**
 * How long the page's own work must have been over before the stream opens. A tool waiting for
 * network idle (500 ms without a request) must see that moment; it may see it late when its own
 * process is busy — the test suite's driver shares one with the server it drives, and 200 ms of
 * margin was missed there — so the margin is 1.5 s. A change made meanwhile is not lost: the
 * stream's `ready` reloads every listener.
 */
const SETTLED_MS = 2_000;

async function run(abort: AbortController): Promise<void> {
  await quiet(SETTLED_MS);
  // A sign-out aborts the stream (api.ts `setCsrf`) and ends this loop.
  while (!abort.signal.aborted && listeners.size && signedIn()) {
    const again = await readOnce(abort);
    if (!again || abort.signal.aborted) break;
    failures++;
    await new Promise((r) => setTimeout(r, Math.min(30_000, 1_000 * 2 ** Math.min(failures, 5))));
  }
  if (running === abort) running = null;
}

function listen(fn: (c: LiveChange) => void): () => void {
  listeners.add(fn);
  if (!running) {
    running = new AbortController();
    void run(running);
  }
  return () => {
    listeners.delete(fn);
    // Kept open while the page changes (a page's listeners go, the next page's come); closed on sign-out.
  };
}

/**
 * Call `reload` when a change of one of `topics` is heard (of record `id` only, when given), and
 * after any gap. Several changes close together make one reload, at most one a second.
 */
export function useLive(topics: readonly ChangeTopic[], reload: () => void, id?: string | null): void {
  const latest = useRef(reload);
  latest.current = reload;
  const key = `${topics.join(',')} ${id ?? ''}`;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let last = 0;
    const fire = () => {
      timer = null;
      last = Date.now();
      latest.current();
    };
    const off = listen((c) => {
      if (c && (!topics.includes(c.topic) || (id && c.id !== null && c.id !== id))) return;
      if (timer) return;
      timer = setTimeout(fire, Math.max(0, 1_000 - (Date.now() - last)));
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, [key]);
}
