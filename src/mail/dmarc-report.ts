// DMARC aggregate reports (RFC 7489 §7.2 and appendix C; docs/deliverability.md §4): the XML a
// mailbox provider mails to a domain's `rua` address, gzip or zip compressed or plain, read with
// maintained libraries — fflate for gzip and zip, fast-xml-parser for the XML — never by hand.
//
// Bounded before anything is trusted: a compressed attachment over MAX_COMPRESSED is refused
// unread; decompression is fed INPUT_CHUNK bytes at a time and stops as soon as its output passes
// MAX_XML, so a zip bomb costs at most MAX_XML + INPUT_CHUNK × 1032 (deflate's largest ratio) bytes
// of output before it is refused; the XML is parsed only when it fits, with DOCTYPEs refused (no
// entity games) and at most MAX_RECORDS rows kept. What is refused carries a reason, counted by the
// caller and stored nowhere.
import { Gunzip, Unzip, UnzipInflate } from 'fflate';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { isIP } from 'node:net';

/** Largest compressed attachment read (bytes). */
export const MAX_COMPRESSED = 1024 * 1024;
/** Largest report XML, decompressed (bytes). */
export const MAX_XML = 4 * 1024 * 1024;
/** Bytes of compressed input pushed at once: bounds what one push may expand to. */
export const INPUT_CHUNK = 1024;
/** Largest output one push can make past the limit (deflate expands at most 1032:1). */
export const OVERSHOOT = INPUT_CHUNK * 1032;
/** Rows (`record` elements) of one report kept; a report with more is refused. */
export const MAX_RECORDS = 10_000;

export type DmarcRefusal = 'too_large' | 'malformed' | 'unsupported';

export class DmarcReportError extends Error {
  constructor(
    readonly reason: DmarcRefusal,
    message: string,
    /** Bytes decompression had made when it stopped (the memory bound: at most MAX_XML + OVERSHOOT). */
    readonly produced = 0,
  ) {
    super(message);
  }
}

/** One row of a report: mail from one source address with one result (RFC 7489 appendix C `RowType`). */
export interface DmarcRow {
  source_ip: string;
  count: number;
  /** The receiver's action: none, quarantine or reject. */
  disposition: 'none' | 'quarantine' | 'reject';
  /** DMARC-aligned DKIM and SPF results (`policy_evaluated`). */
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  /** The `header_from` domain. */
  header_from: string;
}

export interface DmarcReport {
  org_name: string;
  email: string;
  report_id: string;
  /** The reporting period (`date_range`, seconds since the epoch in the XML), as ms. */
  begin: number;
  end: number;
  /** `policy_published`: the policy the receiver found. */
  policy: { domain: string; adkim: string; aspf: string; p: string; sp: string; pct: number };
  rows: DmarcRow[];
}

/** What decompression produced: the bytes, and how many were made (the memory bound's test reads it). */
export interface Expanded {
  bytes: Uint8Array;
  produced: number;
}

const GZIP = [0x1f, 0x8b];
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const starts = (b: Uint8Array, magic: number[]) => magic.every((x, i) => b[i] === x);

/** The report XML of an attachment: gunzipped, unzipped (its first .xml file) or as is; bounded. */
export function expandAttachment(content: Uint8Array): Expanded {
  if (starts(content, GZIP) || starts(content, ZIP)) {
    if (content.byteLength > MAX_COMPRESSED)
      throw new DmarcReportError('too_large', `compressed report of ${content.byteLength} bytes (limit ${MAX_COMPRESSED})`);
    return starts(content, GZIP) ? gunzip(content) : unzip(content);
  }
  if (content.byteLength > MAX_XML) throw new DmarcReportError('too_large', `report of ${content.byteLength} bytes (limit ${MAX_XML})`);
  return { bytes: content, produced: content.byteLength };
}

/** Collects decompressed chunks up to MAX_XML; throws once past it. */
class Collector {
  readonly chunks: Uint8Array[] = [];
  produced = 0;
  add(chunk: Uint8Array): void {
    this.produced += chunk.byteLength;
    if (this.produced > MAX_XML) throw new DmarcReportError('too_large', `report expands past ${MAX_XML} bytes`, this.produced);
    this.chunks.push(chunk);
  }
  result(): Expanded {
    const bytes = new Uint8Array(this.produced);
    let at = 0;
    for (const c of this.chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    return { bytes, produced: this.produced };
  }
}

/** Push `input` INPUT_CHUNK bytes at a time: a decompressor's output per push stays bounded. */
function feed(input: Uint8Array, push: (chunk: Uint8Array, final: boolean) => void): void {
  for (let at = 0; at < input.byteLength; at += INPUT_CHUNK) {
    const end = Math.min(at + INPUT_CHUNK, input.byteLength);
    push(input.subarray(at, end), end === input.byteLength);
  }
}

function gunzip(input: Uint8Array): Expanded {
  const out = new Collector();
  let done = false;
  const g = new Gunzip((chunk, final) => {
    out.add(chunk);
    if (final) done = true;
  });
  try {
    feed(input, (c, final) => g.push(c, final));
  } catch (e) {
    if (e instanceof DmarcReportError) throw e;
    throw new DmarcReportError('malformed', `gzip: ${(e as Error).message}`);
  }
  if (!done) throw new DmarcReportError('malformed', 'gzip: truncated');
  return out.result();
}

function unzip(input: Uint8Array): Expanded {
  const out = new Collector();
  let taken = false;
  let done = false;
  let failure: unknown = null;
  const u = new Unzip((file) => {
    // The first XML file is the report (providers send one); the others are not read.
    if (taken || !/\.xml$/i.test(file.name)) return;
    taken = true;
    file.ondata = (err, chunk, final) => {
      if (err) failure ??= new DmarcReportError('malformed', `zip: ${err.message}`);
      else {
        try {
          out.add(chunk);
        } catch (e) {
          failure ??= e;
          file.terminate();
        }
      }
      if (final) done = true;
    };
    try {
      file.start();
    } catch (e) {
      failure ??= new DmarcReportError('unsupported', `zip: ${(e as Error).message}`);
    }
  });
  u.register(UnzipInflate);
  try {
    feed(input, (c, final) => {
      if (failure) throw failure;
      u.push(c, final);
    });
  } catch (e) {
    if (e instanceof DmarcReportError) throw e;
    throw new DmarcReportError('malformed', `zip: ${(e as Error).message}`);
  }
  if (failure) throw failure;
  if (!taken) throw new DmarcReportError('malformed', 'zip: no .xml file in the archive');
  if (!done) throw new DmarcReportError('malformed', 'zip: truncated');
  return out.result();
}

// The elements that repeat (appendix C: record, and the auth_results and reasons inside it).
const REPEATED = new Set([
  'feedback.record',
  'feedback.record.auth_results.dkim',
  'feedback.record.auth_results.spf',
  'feedback.record.row.policy_evaluated.reason',
]);
const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (_name, path) => REPEATED.has(String(path)),
  processEntities: { enabled: true, maxEntityCount: 0 },
});

type Node = Record<string, unknown>;
const node = (v: unknown): Node => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const bad = (what: string) => new DmarcReportError('malformed', what);

/** Parse the report XML (RFC 7489 appendix C) into what Posthorn keeps; throws DmarcReportError. */
export function parseReport(xmlBytes: Uint8Array): DmarcReport {
  const xml = new TextDecoder('utf-8', { fatal: false }).decode(xmlBytes);
  if (/<!DOCTYPE/i.test(xml)) throw bad('a DOCTYPE (reports have none)');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw bad(`XML: ${valid.err.msg} (line ${valid.err.line})`);
  let doc: Node;
  try {
    doc = node(parser.parse(xml));
  } catch (e) {
    throw bad(`XML: ${(e as Error).message}`);
  }
  const feedback = node(doc.feedback);
  const meta = node(feedback.report_metadata);
  const range = node(meta.date_range);
  const published = node(feedback.policy_published);
  const org_name = text(meta.org_name);
  const report_id = text(meta.report_id);
  const begin = Number(text(range.begin));
  const end = Number(text(range.end));
  const domain = text(published.domain).toLowerCase().replace(/\.$/, '');
  if (!org_name || !report_id) throw bad('no report_metadata org_name or report_id');
  if (!Number.isFinite(begin) || !Number.isFinite(end) || begin <= 0 || end < begin) throw bad('no valid date_range');
  if (!domain) throw bad('no policy_published domain');
  const records = Array.isArray(feedback.record) ? (feedback.record as unknown[]) : [];
  if (records.length > MAX_RECORDS) throw new DmarcReportError('too_large', `${records.length} records (limit ${MAX_RECORDS})`);
  const rows: DmarcRow[] = [];
  for (const r of records) {
    const row = node(node(r).row);
    const evaluated = node(row.policy_evaluated);
    const source_ip = text(row.source_ip);
    const count = Number(text(row.count));
    if (!isIP(source_ip) || !Number.isSafeInteger(count) || count < 0) throw bad('a record without a valid source_ip and count');
    const disposition = text(evaluated.disposition).toLowerCase();
    rows.push({
      source_ip: source_ip.toLowerCase(),
      count,
      disposition: disposition === 'quarantine' || disposition === 'reject' ? disposition : 'none',
      dkim: text(evaluated.dkim).toLowerCase() === 'pass' ? 'pass' : 'fail',
      spf: text(evaluated.spf).toLowerCase() === 'pass' ? 'pass' : 'fail',
      header_from: text(node(node(r).identifiers).header_from).toLowerCase(),
    });
  }
  return {
    org_name,
    email: text(meta.email),
    report_id,
    begin: begin * 1000,
    end: end * 1000,
    policy: {
      domain,
      adkim: text(published.adkim) || 'r',
      aspf: text(published.aspf) || 'r',
      p: text(published.p) || 'none',
      sp: text(published.sp),
      pct: Number(text(published.pct) || 100),
    },
    rows,
  };
}

/** Expand and parse one attachment. */
export function readDmarcAttachment(content: Uint8Array): DmarcReport {
  return parseReport(expandAttachment(content).bytes);
}
