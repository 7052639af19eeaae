// Who is signed in: loaded from GET /auth/session, which also hands out the CSRF token.
import { get, setCsrf } from './api';

export interface Session {
  id: string;
  user: { id: string; email: string; role: 'owner' | 'member'; totp_enabled: boolean };
  team: { id: string; name: string };
  csrf_token: string;
  expires_at: string;
}

export async function loadSession(): Promise<Session | null> {
  try {
    const s = await get<Session>('/auth/session');
    setCsrf(s.csrf_token);
    return s;
  } catch {
    setCsrf(null);
    return null;
  }
}
