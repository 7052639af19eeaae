// Attachment bytes for a validated email (docs/api.md §7.1): base64 `content` decoded, `path`
// URLs fetched before the request is answered (through the SSRF guard), content types settled.
// The 40 MB limit counts every attachment after base64 encoding, fetched ones included.
import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import { GuardError, safeFetch } from '../net/guard';
import { attachmentsTooLarge, invalidAttachment, isMimeType, MAX_ATTACHMENTS_BASE64 } from './validate';
import type { AttachmentInput, ResolvedAttachment } from './types';

const FETCH_TIMEOUT_MS = 30_000;
const OCTET_STREAM = 'application/octet-stream';

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

export async function resolveAttachments(list: AttachmentInput[], opts: { allowPrivate: boolean }): Promise<ResolvedAttachment[]> {
  const decoded = list.map((a) => (a.content !== null ? Buffer.from(a.content, 'base64') : null));
  let budget = MAX_ATTACHMENTS_BASE64 - decoded.reduce((sum, d) => sum + (d ? base64Length(d.byteLength) : 0), 0);
  if (budget < 0) throw attachmentsTooLarge();
  const out: ResolvedAttachment[] = [];
  // One at a time: each fetch may only use what the earlier attachments left of the budget.
  for (const [i, a] of list.entries()) {
    const bytes = decoded[i];
    if (bytes) {
      out.push({ filename: a.filename, content: bytes, content_type: contentType(a.content_type, a.filename, null), content_id: a.content_id });
      continue;
    }
    const fetched = await fetchPath(`attachments[${i}].path`, a.path!, opts.allowPrivate, Math.floor(budget / 4) * 3);
    budget -= base64Length(fetched.bytes.byteLength);
    const filename = a.filename ?? filenameFromUrl(fetched.url);
    out.push({ filename, content: fetched.bytes, content_type: contentType(a.content_type, filename, fetched.type), content_id: a.content_id });
  }
  return out;
}

async function fetchPath(field: string, url: string, allowPrivate: boolean, maxBytes: number) {
  const fail = (why: string) => invalidAttachment(`Invalid \`${field}\` field: could not fetch \`${url}\`: ${why}.`);
  try {
    const res = await safeFetch(url, { allowPrivate, maxBytes, timeoutMs: FETCH_TIMEOUT_MS });
    if (res.status < 200 || res.status > 299) throw fail(`the server answered ${res.status}`);
    return { bytes: res.bytes, url: res.url, type: res.headers.get('content-type') };
  } catch (e) {
    if (e instanceof GuardError) throw e.code === 'too_large' ? attachmentsTooLarge() : fail(e.message);
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
