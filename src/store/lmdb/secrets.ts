// Per-install secrets (signed links, VERP tags, …): 32 random bytes each, created when the store
// is first opened and kept in the `meta` database, so links and return paths stay valid across
// restarts and move with backups.
import { randomBytes } from 'node:crypto';
import type { LmdbEnv } from './env';
import { SECRET_NAMES, type SecretName } from '../interface';

export async function loadSecrets(env: LmdbEnv): Promise<Map<SecretName, Buffer>> {
  const db = env.db('meta');
  const out = new Map<SecretName, Buffer>();
  const missing = SECRET_NAMES.filter((n) => !db.get(`secret:${n}`));
  if (missing.length)
    await env.transaction(() => {
      for (const name of missing) if (!db.get(`secret:${name}`)) db.put(`secret:${name}`, randomBytes(32));
    });
  for (const name of SECRET_NAMES) out.set(name, Buffer.from(db.get(`secret:${name}`) as Uint8Array));
  return out;
}
