// A listener thread (threads.ts): a Worker that opens the store itself and serves every SMTP port
// on a listener of its own, bound with SO_REUSEPORT beside the main thread's. It spools inbound
// mail here (the flushed commit before the 250, as on the main thread) and tells the main thread
// of what it committed (the back office's wake-up, the live feed); AUTH and submission it asks of
// the main thread (`remoteDesk`).
import type { SMTPServer } from 'smtp-server';
import type { Config } from '../config';
import { openStore, storeOptions, SIGNALS, type Signal, type Store } from '../store';
import { log, setQuiet, setSink } from '../log';
import { keepMemoryTidy } from '../limits/memory';
import { profileThisThreadIfAsked } from '../bench-profile';
import { createSmtpServer, sharedLimits, RemoteReply, type SmtpDesk } from './server';
import type { FromListenerThread, ToListenerThread } from './threads';

declare const self: Worker;

const send = (m: FromListenerThread) => self.postMessage(m);
// Log lines are written by the main thread.
setSink((line) => send({ t: 'log', line }));

let store: Store | null = null;
let servers: SMTPServer[] = [];
let tidy: { stop(): void } | null = null;
const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
let seq = 0;

function ask<T>(m: (id: number) => FromListenerThread): Promise<T> {
  const id = ++seq;
  return new Promise<T>((resolve, reject) => {
    waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    send(m(id));
  });
}

function remoteDesk(config: Config, store: Store): SmtpDesk {
  // Sessions that tried AUTH: only their end is news to the main thread's failure counts.
  const authenticating = new Set<string>();
  return {
    config,
    store,
    login: (ip, session, username, password) => {
      authenticating.add(session);
      return ask((id) => ({ t: 'login', id, ip, session, username, password }));
    },
    closed: (session) => {
      if (authenticating.delete(session)) send({ t: 'closed', session });
    },
    // Copied to the main thread (not transferred: a small Buffer is a slice of a shared pool).
    submit: (user, recipients, raw, session) => ask((id) => ({ t: 'submit', id, session, user, recipients, raw })),
    refused: (ip) => send({ t: 'refused', ip }),
  };
}

self.onmessage = (e: MessageEvent<ToListenerThread>) => {
  const m = e.data;
  switch (m.t) {
    case 'init':
      void init(m);
      break;
    case 'answer': {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (!w) break;
      if (m.ok) w.resolve(m.value);
      else w.reject(new RemoteReply(m.reply.code, m.reply.enhanced, m.reply.text));
      break;
    }
    case 'certificate':
      for (const s of servers) s.updateSecureContext({ key: m.key, cert: m.cert });
      break;
    case 'ping':
      send({ t: 'pong', id: m.id });
      break;
    case 'stop':
      void stop();
      break;
  }
};

function listen(server: SMTPServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.server.once('error', reject);
    server.server.listen({ port, host, reusePort: true }, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
}

async function init(m: Extract<ToListenerThread, { t: 'init' }>): Promise<void> {
  setQuiet(m.quiet);
  profileThisThreadIfAsked(`smtp-${m.thread}`);
  try {
    store = await openStore(storeOptions(m.config));
    const opened = store;
    // The back office hears of a spool entry from the main thread, which this one tells.
    for (const signal of Object.keys(SIGNALS) as Signal[]) opened.on(signal, () => send({ t: 'kick', signal }));
    if (!opened.hearsOthers) opened.onChange((changes) => send({ t: 'changes', changes }));
    const desk = remoteDesk(m.config, opened);
    const limits = sharedLimits(m.config, m.cells, m.thread);
    const unbound: { mode: 'starttls' | 'tls'; port: number; error: string }[] = [];
    for (const { mode, port } of m.listeners) {
      const server = createSmtpServer(desk, m.cert, mode, limits);
      try {
        await listen(server, port, m.config.smtp.host);
        servers.push(server);
      } catch (e) {
        unbound.push({ mode, port, error: (e as Error).message });
      }
    }
    tidy = keepMemoryTidy();
    send({ t: 'ready', unbound });
  } catch (e) {
    send({ t: 'failed', error: String((e as Error)?.stack ?? e) });
  }
}

async function stop(): Promise<void> {
  try {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    servers = [];
    tidy?.stop();
    await store?.close();
  } catch (e) {
    log.error('smtp.thread_stop_failed', { error: String((e as Error)?.stack ?? e) });
  }
  send({ t: 'stopped' });
}
