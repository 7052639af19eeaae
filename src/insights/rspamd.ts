// Spam scores from rspamd (README "Deliverability", "Spam score (rspamd)"), through its HTTP
// protocol: the raw message is POSTed to the normal worker's `/checkv2`, with what the SMTP
// transaction would have told it as request headers (`IP`, `Helo`, `Hostname`, `From`, `Rcpt`); the answer is
// JSON — `score`, `required_score`, `action` and the `symbols` that matched.
//
// A check never throws and never takes longer than `spam.timeout`: rspamd down, slow or answering
// nonsense gives an `unavailable` verdict that says why, and the failure is counted (onFailure →
// posthorn_spam_check_failures_total). Nothing that calls it is held back or refused for that.
import type { SpamSymbol, SpamVerdict } from '../store';

/** What the SMTP transaction knows of a message, which rspamd reads from request headers. */
export interface ScanContext {
  /** The client's address (inbound mail); left out for outgoing mail, whose sending IP the receiver sees. */
  ip?: string;
  helo?: string;
  /** The client's name as its address resolves (rspamd's `Hostname`): for outgoing mail, `smtp.hostname`. */
  hostname?: string;
  /** The envelope sender (MAIL FROM). */
  from?: string;
  /** The envelope recipients (RCPT TO). */
  rcpt?: string[];
}

/** Why a check has no score, as counted: rspamd did not answer in time, could not be reached, or answered an error or nonsense. */
export type SpamFailure = 'timeout' | 'unreachable' | 'error';

/** The most rules kept of one answer (rspamd's usual answer has a few dozen). */
const MAX_SYMBOLS = 100;
/** Recipients told to rspamd (it needs a few to judge, not a whole list). */
const MAX_RCPT = 50;

export class Rspamd {
  constructor(
    /** Its normal worker: `http://127.0.0.1:11333` (`spam.rspamd_url`). */
    readonly url: string,
    private readonly timeoutMs: number,
    private readonly onFailure: (why: SpamFailure) => void = () => {},
  ) {}

  /** rspamd's verdict on `message` (the raw bytes, as the receiver would get them; parts are sent one after another). */
  async check(message: Uint8Array | Uint8Array[], ctx: ScanContext = {}): Promise<SpamVerdict> {
    const headers = new Headers({ 'content-type': 'message/rfc822' });
    if (ctx.ip) headers.set('IP', ctx.ip);
    if (ctx.helo) headers.set('Helo', oneLine(ctx.helo));
    if (ctx.hostname) headers.set('Hostname', oneLine(ctx.hostname));
    if (ctx.from !== undefined) headers.set('From', oneLine(ctx.from));
    for (const r of (ctx.rcpt ?? []).slice(0, MAX_RCPT)) headers.append('Rcpt', oneLine(r));
    const body = Array.isArray(message) ? new Blob(message as BlobPart[]) : (message as BlobPart);
    let res: Response;
    try {
      res = await fetch(`${this.url}/checkv2`, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (e) {
      const name = (e as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') return this.failed('timeout', `rspamd did not answer within ${this.timeoutMs} ms (spam.timeout)`);
      return this.failed('unreachable', `rspamd cannot be reached at ${this.url}: ${(e as Error)?.message ?? e}`);
    }
    let answer: unknown;
    try {
      answer = await res.json();
    } catch (e) {
      const name = (e as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') return this.failed('timeout', `rspamd did not answer within ${this.timeoutMs} ms (spam.timeout)`);
      return this.failed('error', `rspamd answered ${res.status} without JSON`);
    }
    if (!res.ok) {
      const why = isObject(answer) && typeof answer.error === 'string' ? `: ${answer.error}` : '';
      return this.failed('error', `rspamd answered ${res.status}${why}`);
    }
    const verdict = readAnswer(answer);
    return verdict ?? this.failed('error', 'rspamd answered without a score');
  }

  private failed(why: SpamFailure, reason: string): SpamVerdict {
    this.onFailure(why);
    return unavailable(reason);
  }
}

/** A verdict that could not be had, and why. */
export function unavailable(reason: string): SpamVerdict {
  return {
    scanner: 'rspamd',
    status: 'unavailable',
    score: null,
    required_score: null,
    action: null,
    symbols: [],
    reason,
    checked_at: new Date().toISOString(),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);
/** A header value on one line (an address given by a sender cannot add request headers). */
const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ');

/** rspamd's `/checkv2` JSON as a verdict; null when it holds no score. */
export function readAnswer(answer: unknown): SpamVerdict | null {
  if (!isObject(answer)) return null;
  const score = num(answer.score);
  if (score === null) return null;
  const symbols: SpamSymbol[] = [];
  if (isObject(answer.symbols))
    for (const [key, s] of Object.entries(answer.symbols)) {
      if (!isObject(s)) continue;
      symbols.push({
        name: typeof s.name === 'string' ? s.name : key,
        score: num(s.score) ?? 0,
        description: typeof s.description === 'string' ? s.description : null,
        options: Array.isArray(s.options) ? s.options.filter((o): o is string => typeof o === 'string').slice(0, 10) : [],
      });
    }
  // The heaviest first (either way: a rule that lowers the score explains as much), then by name.
  symbols.sort((a, b) => Math.abs(b.score) - Math.abs(a.score) || a.name.localeCompare(b.name));
  return {
    scanner: 'rspamd',
    status: 'scored',
    score,
    required_score: num(answer.required_score),
    action: typeof answer.action === 'string' ? answer.action : null,
    symbols: symbols.slice(0, MAX_SYMBOLS),
    reason: null,
    checked_at: new Date().toISOString(),
  };
}
