// A webhook receiver for tests: a Bun.serve on 127.0.0.1 (random port) that records every request
// — headers, the exact raw body, the parsed payload — and answers what the test says.
//
//   const r = await startReceiver();                      // answers 200 "ok"
//   r.answer((req, n) => (n <= 2 ? { status: 500 } : { status: 200 }));   // n: 1-based count of this svix-id
//   r.answer(() => ({ hold: true }));                     // never answers (until release())
//   await r.waitFor((reqs) => reqs.length >= 3, '3 attempts');
//   r.delivered()                                         // one per svix-id answered 2xx (de-duplicated)
//   await r.close();
import { until } from './wait';

export interface Hook {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  /** The raw body as received (what the signature covers). */
  body: string;
  payload: { type: string; created_at: string; data: Record<string, unknown> };
  /** The status answered; null while held or when the connection was dropped. */
  status: number | null;
}

export interface Answer {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Hold the request without answering until release() or close(). */
  hold?: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  /** Every request, oldest first. */
  requests: Hook[];
  answer(fn: (req: Hook, nth: number) => Answer): void;
  /** Requests held at the moment. */
  held(): number;
  /** Answer every held request (default 200). */
  release(answer?: Answer): void;
  /** One request per svix-id, the first answered 2xx. */
  delivered(): Hook[];
  waitFor(done: (requests: Hook[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: Hook[] = [];
  const counts = new Map<string, number>();
  const holding = new Set<(a: Answer) => void>();
  let decide: (req: Hook, nth: number) => Answer = () => ({ status: 200 });
  const respond = (hook: Hook, a: Answer) => {
    hook.status = a.status ?? 200;
    return new Response(a.body ?? 'ok', { status: hook.status, headers: a.headers });
  };

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const body = await req.text();
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => {
        headers[k] = v;
      });
      let payload: Hook['payload'];
      try {
        payload = JSON.parse(body);
      } catch {
        payload = { type: '', created_at: '', data: {} };
      }
      const hook: Hook = {
        id: headers['svix-id'] ?? '',
        timestamp: headers['svix-timestamp'] ?? '',
        signature: headers['svix-signature'] ?? '',
        headers,
        body,
        payload,
        status: null,
      };
      requests.push(hook);
      const nth = (counts.get(hook.id) ?? 0) + 1;
      counts.set(hook.id, nth);
      const a = decide(hook, nth);
      if (!a.hold) return respond(hook, a);
      return new Promise<Response>((resolve) => {
        const go = (final: Answer) => {
          holding.delete(go);
          resolve(respond(hook, final));
        };
        holding.add(go);
      });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    port: server.port!,
    requests,
    answer(fn) {
      decide = fn;
    },
    held: () => holding.size,
    release(answer = { status: 200 }) {
      for (const go of [...holding]) go(answer);
    },
    delivered() {
      const seen = new Map<string, Hook>();
      for (const r of requests) if (r.status !== null && r.status >= 200 && r.status < 300 && !seen.has(r.id)) seen.set(r.id, r);
      return [...seen.values()];
    },
    async waitFor(done, what, timeoutMs = 20_000) {
      await until(
        () => done(requests),
        () => `${what} at the receiver; got ${requests.length} requests: ${JSON.stringify(requests.map((r) => [r.id, r.payload.type, r.status]))}`,
        timeoutMs,
        20,
      );
    },
    async close() {
      for (const go of [...holding]) go({ status: 503 });
      await server.stop(true);
    },
  };
}
