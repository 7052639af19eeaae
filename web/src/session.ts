// Who is signed in: loaded from GET /auth/session, which also hands out the CSRF token.
import type { Session } from '../../src/schemas/accounts';
import { get, setCsrf } from './api';

export async function loadSession(): Promise<Session | null> {
  try {
    const s = await get('/auth/session');
    setCsrf(s.csrf_token);
    return s;
  } catch {
    setCsrf(null);
    return null;
  }
}
