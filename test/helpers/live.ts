// A dashboard session's live stream (docs/api.md §19.15) read as a browser's page reads it: signed
// in with a password, GET /auth/session/events with the cookie and the CSRF header, the events
// parsed as they come.
import type { Running } from './posthorn';
import { until } from './wait';

export interface LiveEvent {
  event: string;
  data: { topic?: string; id?: string | null; reason?: string };
}

export interface LiveReader {
  events: LiveEvent[];
  /** Resolves once an event passes `test` (bounded poll: helpers/wait.ts). */
  seen(test: (e: LiveEvent) => boolean, what: string): Promise<void>;
  /** Whether the server ended the stream. */
  ended: () => boolean;
  close(): void;
}

export async function signIn(p: Running, creds = p.creds): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${p.url}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: creds.admin_email, password: creds.admin_password }),
  });
  const token = /posthorn_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  const body = (await res.json()) as { csrf_token: string };
  if (!token) throw new Error(`sign-in failed: ${res.status}`);
  return { cookie: `posthorn_session=${token}`, csrf: body.csrf_token };
}

/** Open the stream of a session on `url` (any node sharing the store) and read it in the background. */
export async function openLive(url: string, s: { cookie: string; csrf: string }): Promise<LiveReader> {
  const abort = new AbortController();
  const res = await fetch(`${url}/auth/session/events`, { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf }, signal: abort.signal });
  if (res.status !== 200) throw new Error(`stream refused: ${res.status} ${await res.text()}`);
  const events: LiveEvent[] = [];
  let ended = false;
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event) events.push({ event, data: data ? JSON.parse(data) : {} });
        }
      }
    } catch {}
    ended = true;
  })();
  return {
    events,
    seen: async (test, what) => void (await until(async () => events.some(test), what)),
    ended: () => ended,
    close: () => abort.abort(),
  };
}
