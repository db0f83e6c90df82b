import { useState } from 'preact/hooks';
import type { ApiError } from '../api';
import { asError, formErrors } from '../api';
import { FieldError } from '../components';
import { navigate } from '../router';
import { signIn } from '../session';

export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError | Error>();
  const [busy, setBusy] = useState(false);
  const { field, general } = formErrors(error);
  return (
    <form
      class="form narrow"
      onSubmit={(event) =>
        void (async () => {
          event.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            await signIn(email, password);
            navigate('/');
          } catch (e) {
            setError(asError(e));
          } finally {
            setBusy(false);
          }
        })()
      }
    >
      <h1>Sign in</h1>
      {general && (
        <p class="error" role="alert">
          {general}
        </p>
      )}
      <label for="signin-email">Email</label>
      <input
        id="signin-email"
        type="email"
        autocomplete="email"
        required
        value={email}
        onInput={(e) => setEmail(e.currentTarget.value)}
        aria-describedby="signin-email-error"
      />
      <FieldError id="signin-email-error" message={field('email')} />
      <label for="signin-password">Password</label>
      <input
        id="signin-password"
        type="password"
        autocomplete="current-password"
        required
        value={password}
        onInput={(e) => setPassword(e.currentTarget.value)}
        aria-describedby="signin-password-error"
      />
      <FieldError id="signin-password-error" message={field('password')} />
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      <p>
        No account yet? <a href="/register">Register</a>
      </p>
    </form>
  );
}
