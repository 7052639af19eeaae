// An attachment's base64 `content` decoded while a large send body streamed in
// (api/platform/streamed-json.ts), so that the 7 MB of text of a 5 MB file is never held whole: the
// bytes, the length of the text (the 40 MB limit counts it, docs/api.md §7.1) and its last group
// of characters as given. Only plain base64 (no spaces, padding only at the end) is kept so, and
// then every full group of four characters is three bytes and back: the text is the bytes
// re-encoded but for that last group (padded or not, RFC 4648 §3.2), which is what `text` gives
// for the idempotency fingerprint. Everything else stays the string JSON.parse would have made.

/** Characters of one piece of `text`: a multiple of 4 (three bytes each group). */
const PIECE_CHARS = 1024 * 1024;

export class StreamedBase64 {
  /** Bytes of the text before `tail`: whole groups. */
  private readonly groupBytes: number;

  constructor(
    /** The decoded bytes, as Buffer.from(text, 'base64') makes them. */
    readonly bytes: Uint8Array,
    /** The length of the text, in characters. */
    readonly length: number,
    /** The text's last group as given (a partial or padded one), or '' when it ends on a whole group. */
    readonly tail: string,
  ) {
    this.groupBytes = ((length - tail.length) / 4) * 3;
  }

  /** The text as it came, in pieces. */
  *text(): Generator<string> {
    const bytes = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.groupBytes);
    const step = (PIECE_CHARS / 4) * 3;
    for (let at = 0; at < bytes.byteLength; at += step) yield bytes.toString('base64', at, Math.min(at + step, bytes.byteLength));
    if (this.tail) yield this.tail;
  }
}
