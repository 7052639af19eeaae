// A thread of the DKIM signing pool (signers.ts): signs each message it is handed with mailauth
// (mail/dkim.ts) and answers the DKIM-Signature header, or the error. RSA-2048 signing is the
// largest single cost of a delivery; here it runs beside the delivery thread, on another core. A
// large message comes in pieces, its body hashed as they arrive (DkimPieces): never held whole.
import { DkimPieces, dkimSignature } from '../mail/dkim';
import type { SignRequest, SignReply } from './signer-messages';
import { keepMemoryTidy } from '../limits/memory';
import { profileThisThreadIfAsked } from '../bench-profile';

declare const self: Worker;

// This thread's heap is its own: the copies of messages it signed are collected here.
keepMemoryTidy();
profileThisThreadIfAsked('signer');

/** Large messages whose pieces are arriving, by request id. */
const inPieces = new Map<number, DkimPieces>();

self.onmessage = (e: MessageEvent<SignRequest>) => {
  const m = e.data;
  if ('ping' in m) return self.postMessage({ id: m.id, header: '' } satisfies SignReply);
  if ('piece' in m) {
    const pieces = inPieces.get(m.id) ?? new DkimPieces();
    inPieces.set(m.id, pieces);
    return pieces.update(m.piece);
  }
  if ('end' in m) {
    const pieces = inPieces.get(m.id) ?? new DkimPieces();
    inPieces.delete(m.id);
    if (!m.end) return;
    try {
      const header = pieces.signature(m.end);
      return self.postMessage((header === null ? { id: m.id, whole: true } : { id: m.id, header }) satisfies SignReply);
    } catch (err) {
      return self.postMessage({ id: m.id, error: (err as Error).message } satisfies SignReply);
    }
  }
  const { id, raw, domain } = m;
  dkimSignature(raw, domain).then(
    (header) => self.postMessage({ id, header } satisfies SignReply),
    (err: Error) => self.postMessage({ id, error: err.message } satisfies SignReply),
  );
};
