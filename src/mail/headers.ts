// Header fields of a parsed message as text: mailparser's `headerLines` (raw, one entry per field)
// unfolded (RFC 5322 §2.2.3) and with RFC 2047 encoded-words decoded by mailparser's own libmime,
// the decoder it applies to the fields it interprets itself.
import { mailparser } from './parse';

export interface HeaderLine {
  /** Lowercased field name. */
  key: string;
  /** The whole raw field, folded as received, bytes as a binary (latin1) string. */
  line: string;
}

export interface HeaderField {
  /** The field name as written. */
  name: string;
  /** Unfolded, decoded value. */
  value: string;
}

interface Libmime {
  decodeWords(text: string): string;
}

let decoder: Libmime | null = null;

/**
 * mailparser's libmime instance (charset conversion included); created once. An undocumented
 * property of a MailParser, checked by test/dependencies/mailparser.test.ts (docs/ARCHITECTURE.md §5).
 */
async function libmime(): Promise<Libmime> {
  decoder ??= (new (await mailparser()).MailParser() as unknown as { libmime: Libmime }).libmime;
  return decoder;
}

export async function headerFields(lines: HeaderLine[]): Promise<HeaderField[]> {
  const words = await libmime();
  return lines.map(({ line }) => {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim();
    // Unfolding removes the CRLF before whitespace; the bytes are UTF-8 where 8-bit (RFC 6532).
    const raw = Buffer.from(
      line
        .slice(colon + 1)
        .replace(/\r?\n(?=[ \t])/g, '')
        .trim(),
      'binary',
    ).toString('utf8');
    let value = raw;
    try {
      value = words.decodeWords(raw);
    } catch {
      // a malformed encoded-word stays as written
    }
    return { name, value };
  });
}

/** Names lowercased; a field that occurs more than once has its values joined with ", " (docs/api.md §8). */
export function headerObject(fields: HeaderField[]): Record<string, string> {
  const out = new Map<string, string>();
  for (const { name, value } of fields) {
    const key = name.toLowerCase();
    const prev = out.get(key);
    out.set(key, prev === undefined ? value : `${prev}, ${value}`);
  }
  // fromEntries defines own properties: a `__proto__` field cannot reach the prototype.
  return Object.fromEntries(out);
}
