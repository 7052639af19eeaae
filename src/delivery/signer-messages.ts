// What the delivery thread and a signing thread (signers.ts, signer-thread.ts) say to each other.
import type { DkimDomain } from '../mail/dkim';

export type SignRequest =
  | {
      id: number;
      /** The message, a copy of its own (transferred). */
      raw: Uint8Array;
      domain: DkimDomain;
    }
  /** Answered at once with an empty header: the thread runs (checked when the pool starts). */
  | { id: number; ping: true };

export type SignReply = { id: number; header: string } | { id: number; error: string };
