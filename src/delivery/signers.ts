// DKIM signing off the delivery thread: a small pool of Worker threads (signer-thread.ts), each
// signing one message at a time with mailauth. RSA-2048 signing (and the body hash before it) is
// the largest single cost of a delivery — about as much as everything else an attempt does — so it
// runs on the cores the delivery thread leaves idle. A message goes to the thread with the fewest
// in hand; a thread that dies fails what it held (those attempts are retried) and is replaced.
import { availableParallelism } from 'node:os';
import type { DkimDomain } from '../mail/dkim';
import { log } from '../log';
import { workerEntry } from '../worker-entry';
import type { SignReply, SignRequest } from './signer-messages';

const ENTRY = workerEntry(import.meta.url, './signer-thread.ts', 'src/delivery/signer-thread.ts');

/** Threads by default: one per core beside the HTTP and delivery threads, at least one, at most four. */
export const DEFAULT_SIGNERS = Math.max(1, Math.min(4, availableParallelism() - 1));

/** Bun's Worker can be referenced and unreferenced; the DOM's Worker type, which tsc sees, cannot. */
const refs = (w: Worker) => w as unknown as { ref(): void; unref(): void };

interface Signer {
  worker: Worker;
  pending: Map<number, { resolve: (header: string | null) => void; reject: (e: Error) => void }>;
}

/** Bytes of a large message handed to the signing thread a message at a time (signPieces). */
const PIECE = 256 * 1024;

/** The domain's name and keys only (what crosses to the thread). */
const keysOf = (domain: DkimDomain): DkimDomain => ({
  name: domain.name,
  dkim: { selector: domain.dkim.selector, private_key: domain.dkim.private_key },
  ...(domain.ed25519 ? { ed25519: domain.ed25519 } : {}),
});

export class SigningPool {
  private readonly signers: (Signer | null)[];

  get size(): number {
    return this.signers.length;
  }
  private seq = 0;
  private closed = false;

  constructor(size = DEFAULT_SIGNERS) {
    this.signers = Array.from({ length: Math.max(1, size) }, () => null);
  }

  /** The signed message as its two parts: the DKIM-Signature header, then the message itself. */
  async sign(raw: Uint8Array, domain: DkimDomain): Promise<[Buffer, Buffer]> {
    const header = await this.header(raw, domain);
    return [Buffer.from(header, 'latin1'), Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)];
  }

  /**
   * The DKIM-Signature header of a message read in pieces (a large one, never held whole: each
   * piece is copied to the thread as it is read, in PIECE-byte messages) and the message's size; null when the thread
   * cannot sign it so (mail/dkim.ts DkimPieces) and it is to be composed and signed whole.
   */
  async signPieces(pieces: AsyncIterable<Uint8Array>, domain: DkimDomain): Promise<{ header: Buffer; size: number } | null> {
    if (this.closed) throw new Error('the signing pool is closed');
    const signer = this.least();
    let size = 0;
    // Registered before the first piece, so the thread counts as busy (least) and stays referenced.
    const asked = this.ask(signer, (id) => ({ id, piece: new Uint8Array(0) }), []);
    const id = this.seq;
    // A thread that dies meanwhile rejects it before it is awaited.
    asked.catch(() => {});
    // The composer's pieces are small (lines of base64): gathered into PIECE bytes a message, the
    // thread is woken once per PIECE, not per line.
    let piece = new Uint8Array(PIECE);
    let filled = 0;
    const post = () => {
      const out = filled === PIECE ? piece : piece.slice(0, filled);
      signer.worker.postMessage({ id, piece: out } satisfies SignRequest, [out.buffer as ArrayBuffer]);
      piece = new Uint8Array(PIECE);
      filled = 0;
    };
    try {
      for await (const read of pieces) {
        size += read.byteLength;
        for (let at = 0; at < read.byteLength; ) {
          const n = Math.min(PIECE - filled, read.byteLength - at);
          piece.set(read.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled === PIECE) post();
        }
      }
      if (filled) post();
      signer.worker.postMessage({ id, end: keysOf(domain) } satisfies SignRequest);
    } catch (e) {
      // Reading the message failed: the thread forgets it, and nothing waits for its answer.
      this.forget(signer, id, e as Error);
      throw e;
    }
    const header = await asked;
    return header === null ? null : { header: Buffer.from(header, 'latin1'), size: size + Buffer.byteLength(header, 'latin1') };
  }

  /** Start every thread and hear from each: resolves once all of them run. */
  async ready(): Promise<void> {
    for (let i = 0; i < this.signers.length; i++) this.signers[i] ??= this.start(i);
    await Promise.all(this.signers.map((s) => this.ask(s!, (id) => ({ id, ping: true }), [])));
  }

  private header(raw: Uint8Array, domain: DkimDomain): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the signing pool is closed'));
    // A copy of its own for the thread, handed over without a second copy (the original may share
    // its memory with other buffers, or be sent meanwhile).
    const copy = new Uint8Array(raw);
    return this.ask(this.least(), (id) => ({ id, raw: copy, domain: keysOf(domain) }), [copy.buffer as ArrayBuffer]) as Promise<string>;
  }

  /** A request given up: the thread drops what it holds of it, its promise is rejected with `why`. */
  private forget(signer: Signer, id: number, why: Error): void {
    signer.worker.postMessage({ id, end: null } satisfies SignRequest);
    const p = signer.pending.get(id);
    if (!p) return;
    signer.pending.delete(id);
    if (signer.pending.size === 0) refs(signer.worker).unref();
    p.reject(why);
  }

  private ask(signer: Signer, request: (id: number) => SignRequest, transfer: Transferable[]): Promise<string | null> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      // Held while it has work: a thread waiting on an unreferenced Worker, with nothing else to
      // keep its event loop alive, polls instead of sleeping (Bun 1.4: a core at 100% for the wait).
      if (signer.pending.size === 0) refs(signer.worker).ref();
      signer.pending.set(id, { resolve, reject });
      signer.worker.postMessage(request(id), transfer);
    });
  }

  /** The thread with the fewest messages in hand, started when needed. */
  private least(): Signer {
    let best = -1;
    for (let i = 0; i < this.signers.length; i++) {
      const s = this.signers[i];
      if (!s) {
        const started = this.start(i);
        this.signers[i] = started;
        return started;
      }
      if (best < 0 || s.pending.size < this.signers[best]!.pending.size) best = i;
    }
    return this.signers[best]!;
  }

  private start(slot: number): Signer {
    // The pool never keeps the process alive by itself: referenced only while it has work (ask).
    const worker = new Worker(ENTRY, { ref: false } as WorkerOptions);
    const signer: Signer = { worker, pending: new Map() };
    worker.onmessage = (e: MessageEvent<SignReply>) => {
      const m = e.data;
      const p = signer.pending.get(m.id);
      if (!p) return;
      signer.pending.delete(m.id);
      if (signer.pending.size === 0) refs(worker).unref();
      if ('header' in m) p.resolve(m.header);
      else if ('whole' in m) p.resolve(null);
      else p.reject(new Error(m.error));
    };
    worker.onerror = (e) => log.error('delivery.signer_error', { error: e.message });
    worker.addEventListener('close', () => {
      if (this.signers[slot] === signer) this.signers[slot] = null;
      for (const p of signer.pending.values()) p.reject(new Error('the signing thread exited'));
      signer.pending.clear();
    });
    return signer;
  }

  close(): void {
    this.closed = true;
    for (const s of this.signers) s?.worker.terminate();
  }
}
