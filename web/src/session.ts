import { useEffect, useState } from 'preact/hooks';
import { type Me, api, storeToken, storedToken } from './api';

/** Who is signed in: the token (sessionStorage) and the account it belongs to. */
export interface Session {
  readonly token: string | null;
  readonly me: Me | null;
}

let session: Session = { token: storedToken(), me: null };
const listeners = new Set<(s: Session) => void>();

function publish(next: Session): void {
  session = next;
  for (const listener of listeners) listener(session);
}

export function useSession(): Session {
  const [value, setValue] = useState(session);
  useEffect(() => {
    listeners.add(setValue);
    setValue(session);
    return () => void listeners.delete(setValue);
  }, []);
  return value;
}

/** Reads the account of the stored token (the profile: it names the group, staff or not); a token the service refuses (revoked, expired) is dropped. */
export async function loadSession(): Promise<void> {
  if (!session.token) return;
  try {
    publish({ token: session.token, me: await api<Me>('/api/profile/', { cache: 'no-store' }) });
  } catch {
    storeToken(null);
    publish({ token: null, me: null });
  }
}

export async function signIn(email: string, password: string): Promise<void> {
  const { token } = await api<{ token: string }>('/api/auth/login/', {
    method: 'POST',
    json: { email, password },
  });
  storeToken(token);
  session = { token, me: null };
  await loadSession();
}

export async function signOut(): Promise<void> {
  try {
    await api('/api/auth/logout/', { method: 'POST', json: {} });
  } catch {
    // Signed out here whatever the service answers (an already revoked token is just as gone).
  }
  storeToken(null);
  publish({ token: null, me: null });
}
