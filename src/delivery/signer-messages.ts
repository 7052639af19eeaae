// What the delivery thread and a signing thread (signers.ts, signer-thread.ts) say to each other.
import type { DkimDomain } from '../mail/dkim';

export type SignRequest =
  | {
      id: number;
      /** The message, a copy of its own (transferred). */
      raw: Uint8Array;
      domain: DkimDomain;
    }
  /** The next piece of a large message, in order (a copy of its own, transferred); the first starts it. */
  | { id: number; piece: Uint8Array }
  /** The large message's pieces are all sent: its signature under `domain`; null gives it up (no answer). */
  | { id: number; end: DkimDomain | null }
  /** Answered at once with an empty header: the thread runs (checked when the pool starts). */
  | { id: number; ping: true };

/** `whole`: a message in pieces the thread cannot sign so (DkimPieces), to be sent whole. */
export type SignReply = { id: number; header: string } | { id: number; error: string } | { id: number; whole: true };
