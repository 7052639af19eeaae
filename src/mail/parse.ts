// Reading a message with mailparser (its simpleParser), loaded on first use. mailparser brings
// charset tables (iconv-lite, encoding-japanese), HTML entity maps and its HTML/text converters:
// about 20 MB of heap in each thread that loads it. A thread that never reads a message — the HTTP
// thread of an install that sends through the API only, the back office of one that receives no
// mail — does not carry them.
import type { ParsedMail, SimpleParserOptions } from 'mailparser';

type Mailparser = typeof import('mailparser');
let loading: Promise<Mailparser> | null = null;

/** The mailparser module, imported once per thread. */
export const mailparser = (): Promise<Mailparser> => (loading ??= import('mailparser'));

export async function parseMessage(raw: Buffer, options: SimpleParserOptions): Promise<ParsedMail> {
  return (await mailparser()).simpleParser(raw, options);
}
