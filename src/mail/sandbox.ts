// Resend's test addresses (docs/api.md §7.11): delivered@, bounced@, complained@ and
// suppressed@resend.dev, each also with a `+label` before the @, in any case. While
// `delivery.sandbox` is on, mail to them is simulated — it never leaves the machine — so a test
// suite written against Resend sees the events it saw there. Which address stands for what is
// decided here, once: the sending core acts on `suppressed` (sending/enqueue.ts), the delivery
// engine on the others (delivery/sandbox.ts, delivery/settle.ts).

/** What mail to a sandbox address comes to. */
export type SandboxOutcome = 'delivered' | 'bounced' | 'complained' | 'suppressed';

const ADDRESS = /^(delivered|bounced|complained|suppressed)(?:\+[^@]*)?@resend\.dev$/i;

/** The outcome a (bare) address stands for, or null for every other address. */
export function sandboxOutcome(address: string): SandboxOutcome | null {
  const m = ADDRESS.exec(address);
  return m ? (m[1]!.toLowerCase() as SandboxOutcome) : null;
}
