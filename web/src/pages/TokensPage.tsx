import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, asError } from '../api';
import { FieldError } from '../components';
import { formatDate } from '../format';
import { useSession } from '../session';

interface Token {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly expires_at: string | null;
  readonly is_revoked: boolean;
}

export function TokensPage() {
  const { token } = useSession();
  const [tokens, setTokens] = useState<Token[]>();
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; secret: string }>();
  const [copied, setCopied] = useState(false);
  const [revoked, setRevoked] = useState<string>();
  const [error, setError] = useState<ApiError | Error>();
  const reload = () =>
    api<Token[]>('/api/tokens/')
      .then(setTokens)
      .catch((e: unknown) => setError(asError(e)));
  useEffect(() => {
    document.title = 'Tokens — Brain catalogue';
    if (token) void reload();
  }, [token]);
  if (!token)
    return (
      <p>
        <a href="/signin">Sign in</a> to manage your tokens.
      </p>
    );
  return (
    <>
      <h1>Personal access tokens</h1>
      <p>
        Tokens let scripts and the bic command line use the API as you. A token’s secret is shown once, when
        it is created.
      </p>
      <form
        class="form inline"
        onSubmit={(event) =>
          void (async () => {
            event.preventDefault();
            setError(undefined);
            setCopied(false);
            try {
              const made = await api<{ name: string; token: string }>('/api/tokens/', {
                method: 'POST',
                json: { name },
              });
              setCreated({ name: made.name, secret: made.token });
              setRevoked(undefined);
              setName('');
              await reload();
            } catch (e) {
              setError(asError(e));
            }
          })()
        }
      >
        <label for="token-name">Token name</label>
        <input
          id="token-name"
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          aria-describedby="token-name-error"
        />
        <button type="submit">Create token</button>
        <FieldError
          id="token-name-error"
          message={error instanceof ApiError ? (error.fieldMessage('name') ?? error.message) : error?.message}
        />
      </form>
      {created && (
        <div class="secret" role="status">
          <p>Token “{created.name}” created. Copy its secret now: it will not be shown again.</p>
          <code data-testid="token-secret">{created.secret}</code>{' '}
          <button
            type="button"
            onClick={() =>
              void (async () => {
                try {
                  await navigator.clipboard.writeText(created.secret);
                  setCopied(true);
                } catch {
                  setCopied(false);
                }
              })()
            }
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      )}
      {revoked && (
        <p role="status" class="notice">
          Token “{revoked}” revoked: it no longer works anywhere.
        </p>
      )}
      {tokens && tokens.length === 0 && <p>No tokens yet.</p>}
      {tokens && tokens.length > 0 && (
        <table class="tokens">
          <caption>Your tokens</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td>{formatDate(t.created_at)}</td>
                <td>{t.last_used_at ? formatDate(t.last_used_at) : 'never'}</td>
                <td>{t.expires_at ? formatDate(t.expires_at) : 'never'}</td>
                <td>{t.is_revoked ? 'revoked' : 'active'}</td>
                <td>
                  {!t.is_revoked && (
                    <button
                      type="button"
                      aria-label={`Revoke ${t.name}`}
                      onClick={() =>
                        void (async () => {
                          try {
                            await api(`/api/tokens/${t.id}/`, { method: 'DELETE' });
                            await reload();
                            setCreated(undefined);
                            setRevoked(t.name);
                          } catch (e) {
                            setError(asError(e));
                          }
                        })()
                      }
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
