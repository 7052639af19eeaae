// The dashboard's live stream (docs/api.md §19.15): server-sent events telling a signed-in session
// what of its team changed — email events (the event function notes them), broadcasts, domains,
// imports, automation runs, the queue (the collections declaring `changes`, store/collections.ts).
// The store hands every commit's changes to `publish`: this thread's and, through
// backoffice/host.ts, the back office's; in cluster mode every node's (store/pg/signals.ts).
//
// Each stream holds at most BUFFER changes its client has not taken. A client too slow for that
// (or a tab asleep behind a full socket) is told `resync` and the stream ends: it reloads what it
// shows and connects again. Memory per session is bounded whatever the team does.
import type { Change } from '../store';

/** Changes a stream keeps for a client that has not taken them (the same record's are one). */
export const BUFFER = 256;
/** A comment this often keeps proxies and the server's idle timeout (api/server.ts) from closing a quiet stream. */
export const HEARTBEAT_MS = 25_000;
/** Streams one session may hold (tabs); the oldest is closed past it. */
export const STREAMS_PER_SESSION = 6;

const encoder = new TextEncoder();
const frame = (event: string, data: unknown) => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

class Stream {
  /** What the client has not taken yet, by `topic id` (a second change of a record is the first). */
  private readonly pending = new Map<string, Change>();
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  closed = false;
  readonly body: ReadableStream<Uint8Array>;

  constructor(
    readonly team: string,
    readonly session: string,
    private readonly onClose: (s: Stream) => void,
  ) {
    // Counted in frames: Bun pulls when the socket took the last one, so what the client does not
    // read waits in `pending`, never in an unbounded queue.
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
          // How long a browser's EventSource waits before it connects again (HTML §9.2).
          c.enqueue(encoder.encode('retry: 2000\n\n'));
          c.enqueue(frame('ready', {}));
        },
        pull: () => this.flush(),
        cancel: () => this.close(),
      },
      { highWaterMark: 4 },
    );
  }

  /** How many changes wait for the client (tests). */
  get waiting(): number {
    return this.pending.size;
  }

  push(c: Change): void {
    if (this.closed) return;
    const key = `${c.topic} ${c.id ?? ''}`;
    if (!this.pending.has(key)) {
      if (this.pending.size >= BUFFER) {
        this.resync('buffer_full');
        return;
      }
      this.pending.set(key, c);
    }
    this.flush();
  }

  private flush(): void {
    const c = this.controller;
    if (!c || this.closed) return;
    for (const [key, change] of this.pending) {
      if ((c.desiredSize ?? 0) <= 0) return;
      this.pending.delete(key);
      c.enqueue(frame('change', { topic: change.topic, id: change.id }));
    }
  }

  heartbeat(): void {
    const c = this.controller;
    if (c && !this.closed && (c.desiredSize ?? 0) > 0) c.enqueue(encoder.encode(': ping\n\n'));
  }

  /** Tell the client to reload what it shows, and end (it connects again). */
  resync(reason: 'buffer_full' | 'replaced' | 'session_ended'): void {
    if (this.closed) return;
    this.pending.clear();
    try {
      this.controller?.enqueue(frame('resync', { reason }));
      this.controller?.close();
    } catch {
      // Already closed by the client.
    }
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.clear();
    this.onClose(this);
  }
}

export interface LiveSession {
  team: string;
  id: string;
  /** Whether the session may still read (not signed out, revoked or expired): asked at each heartbeat. */
  live(): Promise<boolean>;
}

export class LiveFeed {
  private readonly byTeam = new Map<string, Set<Stream>>();
  private readonly sessions = new Map<string, { session: LiveSession; streams: Stream[] }>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly heartbeatMs = HEARTBEAT_MS) {}

  /** A new stream for `session`: its body, for a `text/event-stream` answer. */
  open(session: LiveSession): Stream {
    const stream = new Stream(session.team, session.id, (s) => this.drop(s));
    const team = this.byTeam.get(session.team) ?? new Set<Stream>();
    this.byTeam.set(session.team, team);
    team.add(stream);
    const mine = this.sessions.get(session.id) ?? { session, streams: [] };
    mine.streams.push(stream);
    this.sessions.set(session.id, mine);
    while (mine.streams.length > STREAMS_PER_SESSION) mine.streams[0]!.resync('replaced');
    this.startTimer();
    return stream;
  }

  /** Committed changes: each goes to the streams of its team, and no other. */
  publish(changes: readonly Change[]): void {
    for (const c of changes) for (const s of this.byTeam.get(c.team) ?? []) s.push(c);
  }

  /** Open streams (tests, GET /metrics). */
  get streams(): number {
    let n = 0;
    for (const t of this.byTeam.values()) n += t.size;
    return n;
  }

  /** End every stream (the service stops). */
  close(): void {
    for (const t of [...this.byTeam.values()]) for (const s of [...t]) s.resync('session_ended');
    this.stopTimer();
  }

  private drop(s: Stream): void {
    const team = this.byTeam.get(s.team);
    team?.delete(s);
    if (team?.size === 0) this.byTeam.delete(s.team);
    const mine = this.sessions.get(s.session);
    if (mine) {
      mine.streams = mine.streams.filter((x) => x !== s);
      if (!mine.streams.length) this.sessions.delete(s.session);
    }
    if (!this.byTeam.size) this.stopTimer();
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), this.heartbeatMs);
    this.timer.unref?.();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Keep quiet streams open, and end those of sessions that ended. */
  private async beat(): Promise<void> {
    for (const { session, streams } of [...this.sessions.values()]) {
      const live = await session.live().catch(() => true);
      for (const s of [...streams]) live ? s.heartbeat() : s.resync('session_ended');
    }
  }
}
