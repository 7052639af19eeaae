// Attachment bytes for a validated email (docs/api.md §7.1): base64 `content` decoded, a Buffer's
// bytes taken as they are, `path` URLs fetched before the request is answered (through the SSRF
// guard), content types settled. The 40 MB limit counts every attachment after base64 encoding,
// fetched ones included; the emails of a batch share one more limit (§7.2, `BatchAttachments`).
import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import { errors } from '../errors';
import { GuardError, safeFetch } from '../net/guard';
import { attachmentsTooLarge, base64Length, invalidAttachment, isMimeType, MAX_ATTACHMENTS_BASE64 } from './validate';
import type { AttachmentInput, ResolvedAttachment } from './types';

const FETCH_TIMEOUT_MS = 30_000;
const OCTET_STREAM = 'application/octet-stream';

/** A batch's attachments may total this much after base64 encoding, fetched ones included (docs/api.md §7.2): the body limit. */
export const MAX_BATCH_ATTACHMENTS_BASE64 = 50 * 1024 * 1024;

export function batchAttachmentsTooLarge() {
  return errors.invalidField('attachments', 'the attachments of a batch may total at most 50 MB after base64 encoding.');
}

/** An email's share of a request's attachment budget (a batch item's, `BatchAttachments#share`). */
export interface AttachmentShare {
  /** Resolves when the email may spend: the items before it are done. */
  ready: Promise<void>;
  /** What is left, after base64 encoding. */
  left(): number;
  /** Spends `base64Bytes`; throws the batch's 422 when that passes the limit. */
  spend(base64Bytes: number): void;
}

/**
 * The attachments of one POST /emails/batch request (docs/api.md §7.2): one budget for all its
 * emails, spent in the items' order. An item's attachments are resolved once every item before it
 * is prepared or refused, so a batch passes the limit at the same item every time, and its `path`s
 * are fetched one at a time — a hundred fetches of 30 MB at once would hold 3 GB.
 */
export class BatchAttachments {
  private left = MAX_BATCH_ATTACHMENTS_BASE64;
  private readonly ended: PromiseWithResolvers<void>[];
  /** `done[i]`: items 0…i have ended. */
  private readonly done: Promise<unknown>[] = [];

  constructor(items: number) {
    this.ended = Array.from({ length: items }, () => Promise.withResolvers<void>());
    for (const [i, e] of this.ended.entries()) this.done.push(i === 0 ? e.promise : Promise.all([this.done[i - 1], e.promise]));
  }

  share(index: number): AttachmentShare {
    return {
      ready: index === 0 ? Promise.resolve() : this.done[index - 1]!.then(() => undefined),
      left: () => this.left,
      spend: (bytes) => {
        if (bytes > this.left) throw batchAttachmentsTooLarge();
        this.left -= bytes;
      },
    };
  }

  /** Item `index` is prepared or refused (call it either way, or the items after it wait for ever). */
  end(index: number): void {
    this.ended[index]!.resolve();
  }
}

export async function resolveAttachments(list: AttachmentInput[], opts: { allowPrivate: boolean; share?: AttachmentShare }): Promise<ResolvedAttachment[]> {
  if (!list.length) return [];
  const share = opts.share;
  if (share) await share.ready;
  const decoded = list.map((a) => (a.content === null ? null : typeof a.content === 'string' ? Buffer.from(a.content, 'base64') : a.content));
  const given = decoded.reduce((sum, d) => sum + (d ? base64Length(d.byteLength) : 0), 0);
  let budget = MAX_ATTACHMENTS_BASE64 - given;
  if (budget < 0) throw attachmentsTooLarge();
  share?.spend(given);
  const out: ResolvedAttachment[] = [];
  // One at a time: each fetch may only use what the earlier attachments left of the budget.
  for (const [i, a] of list.entries()) {
    const bytes = decoded[i];
    if (bytes) {
      out.push({ filename: a.filename, content: bytes, content_type: contentType(a.content_type, a.filename, null), content_id: a.content_id });
      continue;
    }
    // The smaller of the two budgets bounds the fetch, and names the limit it passes.
    const batchBound = share !== undefined && share.left() < budget;
    const limit = batchBound ? share.left() : budget;
    const tooLarge = batchBound ? batchAttachmentsTooLarge : attachmentsTooLarge;
    const fetched = await fetchPath(`attachments[${i}].path`, a.path!, opts.allowPrivate, Math.floor(limit / 4) * 3, tooLarge);
    const spent = base64Length(fetched.bytes.byteLength);
    budget -= spent;
    share?.spend(spent);
    const filename = a.filename ?? filenameFromUrl(fetched.url);
    out.push({ filename, content: fetched.bytes, content_type: contentType(a.content_type, filename, fetched.type), content_id: a.content_id });
  }
  return out;
}

async function fetchPath(field: string, url: string, allowPrivate: boolean, maxBytes: number, tooLarge: () => Error) {
  const fail = (why: string) => invalidAttachment(`Invalid \`${field}\` field: could not fetch \`${url}\`: ${why}.`);
  try {
    const res = await safeFetch(url, { allowPrivate, maxBytes, timeoutMs: FETCH_TIMEOUT_MS });
    if (res.status < 200 || res.status > 299) throw fail(`the server answered ${res.status}`);
    return { bytes: res.bytes, url: res.url, type: res.headers.get('content-type') };
  } catch (e) {
    if (e instanceof GuardError) throw e.code === 'too_large' ? tooLarge() : fail(e.message);
    throw e;
  }
}

/** The last path segment of a URL, decoded; null when there is none. */
function filenameFromUrl(url: string): string | null {
  const segment = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment) || null;
  } catch {
    return segment || null;
  }
}

/** As given; else from the filename's extension; else what the server said; else octet-stream. */
function contentType(given: string | null, filename: string | null, served: string | null): string {
  if (given) return given;
  if (filename && /\.[^./\\]+$/.test(filename)) {
    const byName = detectMimeType(filename);
    if (byName !== OCTET_STREAM) return byName;
  }
  const value = served?.trim();
  return value && isMimeType(value) ? value : OCTET_STREAM;
}
