// A large send body parsed as it arrives (docs/api.md §1.4, §7.1; body.ts decides when): the
// tokens of stream-json's Parser are put together into the value JSON.parse would have made, except
// that an attachment's base64 `content` is decoded as its characters arrive (StreamedBase64) — so
// the 7 MB of JSON of a 5 MB file is never held whole, nor its text as a string beside the parsed
// body. Whatever is not plain base64 stays the string it was. What JSON.parse refuses this refuses
// too: stream-json takes any JavaScript white space between tokens (\s), JSON only four (RFC 8259
// §2), so the others are let through only inside strings.
import Parser from 'stream-json/Parser';
import { errors } from '../../errors';
import { StreamedBase64 } from '../../schemas/streamed-base64';

/** Where a route's attachments are: a send's `attachments`, or each batch item's. */
export type LargeBody = 'email' | 'batch';

interface Token {
  name: string;
  value?: unknown;
}

/** The parser's state while it reads (stream-json 1.9.1, Parser.js): whether it is inside a string. */
interface ParserState {
  _expect: string;
  /** Text received and not yet made into tokens. */
  _buffer: string;
  _transform(chunk: string, encoding: string, done: (e?: Error | null) => void): void;
  _flush(done: (e?: Error | null) => void): void;
  push(token: Token): boolean;
}

// White space to JavaScript (\s, what stream-json skips), not to JSON.
const NOT_JSON_SPACE = /[\v\f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/g;
const NON_SPACE = /\S/;
// What ends a run of a string's plain characters: its closing quote, an escape, or a control
// character (which JSON refuses inside a string, RFC 8259 §7).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters end a run of plain ones.
const NOT_PLAIN = /["\\\x00-\x1f]/;

interface Frame {
  container: Record<string, unknown> | unknown[];
  array: boolean;
  /** An object's key whose value is being read. */
  key: string | null;
}

/** A JSON text fed in pieces; `end` gives its value, undefined when the text was only white space. */
export class StreamedJson {
  private readonly parser: ParserState;
  private readonly stack: Frame[] = [];
  private root: unknown;
  private rooted = false;
  /** Arrays and objects nest deeper than `maxDepth` (body.ts answers that once the text proved to be JSON). */
  tooDeep = false;
  /** Anything but white space was seen (JSON.parse is never asked about an empty body, body.ts). */
  private content = false;
  private failed = false;
  private string: string | null = null;
  private base64: Base64Decoder | null = null;

  constructor(
    private readonly where: LargeBody,
    /** Deepest nesting of arrays and objects (body.ts MAX_BODY_DEPTH). */
    private readonly maxDepth: number,
    /**
     * At most how many characters are still to come, counting from the start of the piece being
     * written (a body's Content-Length less what came before it); unset when the length is unknown.
     */
    private readonly charsLeft?: () => number,
  ) {
    // Tokens: keys and numbers whole, strings in pieces (a long one never held whole).
    this.parser = new Parser({ packKeys: true, streamKeys: false, packNumbers: true, streamNumbers: false, packStrings: false }) as unknown as ParserState;
    this.parser.push = (t) => {
      this.token(t);
      return true;
    };
  }

  /** The next piece of the text. After a syntax error the rest is only looked at for content. */
  write(text: string): void {
    if (!this.content && NON_SPACE.test(text)) this.content = true;
    if (this.failed) return;
    let from = 0;
    NOT_JSON_SPACE.lastIndex = 0;
    for (let m = NOT_JSON_SPACE.exec(text); m; m = NOT_JSON_SPACE.exec(text)) {
      this.feed(text.slice(from, m.index));
      // Outside a string (or after a token left unfinished) JSON.parse refuses it.
      if (this.failed || (this.parser._expect !== 'string' && this.parser._expect !== 'keyVal')) {
        this.failed = true;
        return;
      }
      from = m.index;
    }
    this.feed(from ? text.slice(from) : text);
  }

  /** The value; throws the 400 of bad JSON as JSON.parse's failure is answered (body.ts). */
  end(): unknown {
    if (!this.failed) this.parser._flush((e) => this.fail(e));
    if (!this.content) return undefined;
    if (this.failed || !this.rooted || this.stack.length) throw errors.badJson();
    return this.root;
  }

  private feed(text: string): void {
    if (!text || this.failed) return;
    // Inside a string value with nothing left over, its plain characters up to what ends them are
    // its next piece as they are: handed on at once, not matched 256 characters at a time by the
    // parser (which took three quarters of the HTTP thread's time under bench:memory, one
    // request's pieces at a time while /health waited). The rest goes through the parser.
    if (this.parser._expect === 'string' && this.parser._buffer === '') {
      const stop = text.search(NOT_PLAIN);
      if (stop !== 0) {
        this.token({ name: 'stringChunk', value: stop < 0 ? text : text.slice(0, stop) });
        if (stop < 0) return;
        text = text.slice(stop);
      }
    }
    this.parser._transform(text, 'utf8', (e) => this.fail(e));
  }

  private fail(e: Error | null | undefined): void {
    if (e) this.failed = true;
  }

  private token(t: Token): void {
    this.content = true;
    switch (t.name) {
      case 'startObject':
      case 'startArray': {
        const array = t.name === 'startArray';
        const container = array ? [] : {};
        this.value(container);
        this.stack.push({ container, array, key: null });
        if (this.stack.length > this.maxDepth) this.tooDeep = true;
        return;
      }
      case 'endObject':
      case 'endArray':
        this.stack.pop();
        return;
      case 'keyValue':
        this.stack[this.stack.length - 1]!.key = t.value as string;
        return;
      case 'startString':
        // The string is in what the parser holds and what is still to come: its length is at most that.
        if (this.atAttachmentContent()) this.base64 = new Base64Decoder(this.charsLeft && this.charsLeft() + this.parser._buffer.length);
        else this.string = '';
        return;
      case 'stringChunk':
        if (this.base64) this.base64.add(t.value as string);
        else this.string += t.value as string;
        return;
      case 'endString':
        if (this.base64) this.value(this.base64.end());
        else this.value(this.string);
        this.base64 = null;
        this.string = null;
        return;
      case 'numberValue':
        this.value(Number(t.value));
        return;
      default: // nullValue, trueValue, falseValue
        this.value(t.value);
    }
  }

  private value(v: unknown): void {
    const top = this.stack[this.stack.length - 1];
    if (!top) {
      this.root = v;
      this.rooted = true;
    } else if (top.array) (top.container as unknown[]).push(v);
    // An own property, as JSON.parse makes it, even for `__proto__`.
    else if (top.key === '__proto__') Object.defineProperty(top.container, top.key, { value: v, writable: true, enumerable: true, configurable: true });
    else (top.container as Record<string, unknown>)[top.key!] = v;
  }

  /** Is the string starting now a send's `attachments[i].content` (docs/api.md §7.1; §7.2 for each batch item)? */
  private atAttachmentContent(): boolean {
    const s = this.stack;
    const at = this.where === 'email' ? 0 : 1;
    if (s.length !== at + 3 || (this.where === 'batch' && !s[0]!.array)) return false;
    const [send, list, attachment] = [s[at]!, s[at + 1]!, s[at + 2]!];
    return !send.array && send.key === 'attachments' && list.array && !attachment.array && attachment.key === 'content';
  }
}

/** Characters gathered before a piece is decoded. */
const DECODE_CHARS = 64 * 1024;
const LAST = /^[A-Za-z0-9+/]*={0,2}$/;
/** The most bytes an attachment may have (40 MB of base64, docs/api.md §7.1): no larger buffer is set aside. */
const MAX_BYTES = 30 * 1024 * 1024;
/**
 * Bytes decoded before the one buffer is set aside (the pieces so far copied into it): the many
 * small attachments a batch may carry never each reserve what is left of a 50 MB body.
 */
const TARGET_FROM = 256 * 1024;
/** Room set aside and left unused that is given back (the bytes copied to a buffer of their size). */
const MAX_SLACK = 1024 * 1024;

/**
 * One base64 string, decoded piece by piece while it is plain base64 (src/sending/validate.ts's
 * check: the alphabet, padding only at the end, a length that is not 1 more than a multiple of 4,
 * no spaces); from the first piece that is not, the string itself, put back together. When the
 * body's length bounds the string's (`maxChars`), the pieces are decoded into one buffer of that
 * size, so the bytes are never held twice (pieces, then their concatenation: 10 MB at the end of
 * each 5 MB file, issue 38's memory goal); otherwise, or when that buffer proves too small, into
 * pieces put together at the end.
 */
class Base64Decoder {
  private pending = '';
  /** Where the pieces are decoded to once TARGET_FROM were, while they fit; null until then, or once they do not. */
  private target: Buffer | null = null;
  /** The room the string may need, in bytes; 0 once a buffer was set aside or cannot be. */
  private room: number;
  /** Bytes decoded so far. */
  private size = 0;
  private readonly pieces: Buffer[] = [];
  private decodedChars = 0;
  /** The text, once it proved not to be plain base64. */
  private plain: string | null = null;

  /** `maxChars`: at most how many characters the string has, when known. */
  constructor(maxChars?: number) {
    // Three bytes for each whole group, and a partial last one (RFC 4648 §4).
    this.room = maxChars === undefined ? 0 : Math.min(MAX_BYTES, Math.ceil(maxChars / 4) * 3);
  }

  add(chunk: string): void {
    if (this.plain !== null) {
      this.plain += chunk;
      return;
    }
    const total = this.pending.length + chunk.length;
    if (total < DECODE_CHARS + 4) {
      this.pending += chunk;
      return;
    }
    // Whole groups, leaving at least one for the end: the padding, if any, is in the last.
    const n = Math.floor((total - 4) / 4) * 4;
    const before = this.size;
    // A long piece is decoded where it lies (a substring), not joined to what was left first: the
    // join would copy it whole. The few characters left complete their groups from its start.
    let parts: string[];
    let left: string;
    if (chunk.length >= DECODE_CHARS) {
      const k = (4 - (this.pending.length % 4)) % 4;
      const upTo = n - this.pending.length;
      parts = [this.pending + chunk.slice(0, k), chunk.slice(k, upTo)];
      left = chunk.slice(upTo);
    } else {
      const text = this.pending + chunk;
      parts = [text.slice(0, n)];
      left = text.slice(n);
    }
    for (const part of parts) {
      // Decoding skips what is not base64 and stops at '=': fewer bytes than groups tell it; the
      // URL-safe alphabet it also takes is looked for (four times cheaper than a regular expression).
      if (this.decode(part) !== (part.length / 4) * 3 || part.includes('-') || part.includes('_')) {
        this.plain = this.text(before) + this.pending + chunk;
        return;
      }
    }
    this.decodedChars += n;
    this.pending = left;
  }

  end(): string | StreamedBase64 {
    if (this.plain !== null) return this.plain;
    // Short: the string, as JSON.parse gives it.
    if (!this.decodedChars) return this.pending;
    const rest = this.pending;
    const length = this.decodedChars + rest.length;
    if (!LAST.test(rest) || length % 4 === 1 || (rest.endsWith('=') && length % 4 !== 0)) return this.text(this.size) + rest;
    const tail = rest.slice(rest.length - (rest.endsWith('=') ? 4 : length % 4));
    this.decode(rest);
    return new StreamedBase64(this.bytes(), length, tail);
  }

  /** Decodes `text` after the bytes so far; answers how many bytes it made. */
  private decode(text: string): number {
    if (this.room && this.size >= TARGET_FROM) {
      // Past TARGET_FROM: one buffer for the rest, the pieces so far copied to its start.
      if (this.room >= this.size + Math.ceil(text.length / 4) * 3) {
        this.target = Buffer.allocUnsafe(this.room);
        let at = 0;
        for (const piece of this.pieces.splice(0)) at += piece.copy(this.target, at);
      }
      this.room = 0;
    }
    const target = this.target;
    let made: number;
    if (target && this.size + Math.ceil(text.length / 4) * 3 <= target.byteLength) made = target.write(text, this.size, 'base64');
    else {
      // No buffer, or it is too small after all (a body longer than it said): pieces from here on.
      if (target) {
        this.pieces.push(target.subarray(0, this.size));
        this.target = null;
      }
      const bytes = Buffer.from(text, 'base64');
      this.pieces.push(bytes);
      made = bytes.byteLength;
    }
    this.size += made;
    return made;
  }

  /** The bytes decoded, in one buffer. */
  private bytes(): Buffer {
    const target = this.target;
    if (!target) return Buffer.concat(this.pieces);
    // Much room left unused is given back: the bytes are kept until the email is stored.
    if (target.byteLength - this.size > MAX_SLACK) return Buffer.from(target.subarray(0, this.size));
    return target.subarray(0, this.size);
  }

  /** The characters of the first `bytes` decoded: whole groups, so they re-encode to themselves. */
  private text(bytes: number): string {
    const all = this.target ? this.target : Buffer.concat(this.pieces);
    return all.toString('base64', 0, bytes);
  }
}
