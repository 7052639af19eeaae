// The official SDK at its older majors (the dev dependencies resend-v3, resend-v4 and resend-v5),
// pointed at a running Posthorn the way their users point them elsewhere: RESEND_BASE_URL. Those
// majors read the variable once, when their module loads, into a constant of the module; so each
// client here comes from a fresh copy of the module (a query string makes another module of the
// same file), loaded with the variable set, which is then put back.
import type { Resend as ResendV3 } from 'resend-v3';
import type { Resend as ResendV4 } from 'resend-v4';
import type { Resend as ResendV5 } from 'resend-v5';

export type LegacyMajor = 3 | 4 | 5;
type Client = { 3: ResendV3; 4: ResendV4; 5: ResendV5 };

let loads = 0;

/** A client of the SDK at `major` for `key`, sending to `url`. */
export async function legacyResend<M extends LegacyMajor>(major: M, url: string, key: string): Promise<Client[M]> {
  const before = process.env.RESEND_BASE_URL;
  process.env.RESEND_BASE_URL = url;
  try {
    const mod = (await import(`${require.resolve(`resend-v${major}`)}?posthorn-test=${++loads}`)) as { Resend: new (key: string) => Client[M] };
    return new mod.Resend(key);
  } finally {
    if (before === undefined) delete process.env.RESEND_BASE_URL;
    else process.env.RESEND_BASE_URL = before;
  }
}

/**
 * The JSON bodies the SDK sends while `run` runs (the SDKs call the global fetch), to show what a
 * test sent on the wire — a Buffer as `{"type":"Buffer","data":[…]}` or as base64.
 */
export async function sentBodies<T>(run: () => Promise<T>): Promise<{ result: T; bodies: unknown[] }> {
  const real = globalThis.fetch;
  const bodies: unknown[] = [];
  globalThis.fetch = Object.assign(
    (input: string | URL | Request, init?: RequestInit) => {
      if (typeof init?.body === 'string') bodies.push(JSON.parse(init.body));
      return real(input, init);
    },
    { preconnect: real.preconnect },
  );
  try {
    return { result: await run(), bodies };
  } finally {
    globalThis.fetch = real;
  }
}
