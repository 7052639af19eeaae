// The API request log (docs/api.md §15): one entry per authenticated request, errors included,
// with attachment content left out and API key tokens and webhook secrets masked. Written without
// holding up the response, batched; GET /logs flushes and waits first, so a client always sees its
// own requests.
import type { Store, LogRec, ApiKeyRec } from '../../store';
import { newId, nowIso } from '../../ids';
import { inBackground } from '../../store/guarded';
import { StreamedBase64 } from '../../schemas/streamed-base64';

const TOKEN_ANYWHERE = /re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}/g;
/** Webhook signing secrets (POST /webhooks, GET /webhooks/{id}, rotate) are masked the same way. */
const SECRET_ANYWHERE = /whsec_[A-Za-z0-9+/]{32}/g;
const MAX_STRING = 64 * 1024;

/** Tokens and secrets masked in a piece of text (a string value, or a whole JSON document). */
function mask(text: string): string {
  if (text.includes('re_')) text = text.replace(TOKEN_ANYWHERE, (t) => `${t.slice(0, 11)}…`);
  return text.includes('whsec_') ? text.replace(SECRET_ANYWHERE, 'whsec_…') : text;
}

/**
 * The request body as the log keeps it (JSON text): the text as received, masked, when nothing in
 * it has to go (no attachment content, no string past the cut); else a redacted copy of the parsed
 * body. Taken before validation, which strips unknown keys from the parsed body in place.
 */
export function loggedBody(body: unknown, text: string | undefined): string {
  // No text: a large body parsed as it arrived (streamed-json.ts), larger than the cut anyway.
  if (text !== undefined && text.length <= MAX_STRING && !text.includes('"attachments"')) return mask(text);
  return JSON.stringify(redact(body));
}

/** Copy of a body safe to keep: attachment content → "[n bytes]", tokens masked, huge strings cut. */
export function redact(value: unknown): unknown {
  if (typeof value === 'string') {
    const masked = mask(value);
    return masked.length > MAX_STRING ? `${masked.slice(0, MAX_STRING)}…` : masked;
  }
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = k === 'attachments' && Array.isArray(v) ? v.map(redactAttachment) : redact(v);
    return out;
  }
  return value;
}

/** A Node Buffer as JSON (docs/api.md §2 item 16): its bytes are attachment content too, and may be millions of numbers. */
const isBuffer = (v: unknown): v is { data: unknown[] } =>
  typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data);

function redactAttachment(a: unknown): unknown {
  if (!a || typeof a !== 'object' || Array.isArray(a)) return redact(a);
  const { content, ...rest } = a as Record<string, unknown>;
  const out = redact(rest) as Record<string, unknown>;
  if (typeof content === 'string') out.content = `[${Buffer.byteLength(content, 'base64')} bytes]`;
  else if (content instanceof StreamedBase64) out.content = `[${content.bytes.byteLength} bytes]`;
  else if (isBuffer(content)) out.content = `[${content.data.length} bytes]`;
  else if (content !== undefined) out.content = redact(content);
  return out;
}

export interface LogInput {
  key: ApiKeyRec;
  method: string;
  path: string;
  /** The client's address (context.ts clientIp); '' when unknown. */
  ip: string;
  status: number;
  userAgent: string | null;
  startedAt: number;
  /** The body as the log keeps it (`loggedBody`, app.ts), or undefined when there was none. */
  requestJson: string | undefined;
  responseJson: string | undefined;
}

/** A response body kept for the log: masked, and too large ones (a long email's html) summarised. */
const MAX_RESPONSE = 256 * 1024;
function responseText(json: string | undefined): string | null {
  if (json === undefined) return null;
  if (json.length > MAX_RESPONSE) return JSON.stringify({ truncated: true, bytes: Buffer.byteLength(json) });
  return mask(json);
}

/**
 * Entries are buffered and written in one unit of work per tick: logging every request in a commit
 * of its own would make the log, not the API, the limit on request rate.
 */
export class RequestLog {
  private pending: LogRec[] = [];

  constructor(private readonly store: Store) {}

  /** Write the buffered entries now; resolves once they (and every earlier write) are committed. */
  async flush(): Promise<void> {
    await this.write();
    await this.store.settled();
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length) await this.store.appendLogs(batch);
  }

  record(e: LogInput): void {
    if (this.pending.length === 0) setImmediate(() => inBackground('request log', this.write()));
    this.pending.push(entry(e));
  }
}

function entry(e: LogInput): LogRec {
  return {
    id: newId(),
    team_id: e.key.team_id,
    created_at: nowIso(),
    api_key_id: e.key.id,
    endpoint: e.path,
    method: e.method,
    response_status: e.status,
    user_agent: e.userAgent,
    ip: e.ip || null,
    duration_ms: Math.round((performance.now() - e.startedAt) * 100) / 100,
    request_json: e.requestJson ?? null,
    response_json: responseText(e.responseJson),
  };
}
