// The sending thread of scripts/bench/accept-bounds.ts (variant sending-thread): Posthorn's sending
// core — the body parsed, validated, prepared and committed — on a Worker with its own services on
// the same store, answering each email's id once its commit is flushed.
import { inProcessServices } from './in-process';
import { prepare, commit } from '../../src/sending/submit';
import { setQuiet } from '../../src/log';
import type { ApiKeyRec } from '../../src/store';

declare const self: Worker;
setQuiet(true);
const decoder = new TextDecoder();
let deps: Parameters<typeof prepare>[0];

self.onmessage = async (e: MessageEvent<{ dir: string; port: number }>) => {
  const { dir, port } = e.data;
  const svc = await inProcessServices(dir, port);
  deps = { store: svc.store, events: svc.events, config: svc.config };
  self.onmessage = async (m: MessageEvent<{ n: number; team: string; key: ApiKeyRec; bytes: ArrayBuffer }>) => {
    const { n, team, key, bytes } = m.data;
    const p = await prepare(deps, { team, key }, JSON.parse(decoder.decode(bytes)));
    await commit(deps, [p]);
    self.postMessage({ n, id: p.email.id });
  };
  self.postMessage({ ready: true });
};
