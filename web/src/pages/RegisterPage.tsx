import { useState } from 'preact/hooks';
import type { ApiError } from '../api';
import { api, asError, formErrors } from '../api';
import { FieldError } from '../components';
import { navigate } from '../router';
import { signIn } from '../session';

const FIELDS = [
  ['email', 'Email', 'email', 'email'],
  ['username', 'Username', 'text', 'username'],
  ['first_name', 'First name', 'text', 'given-name'],
  ['last_name', 'Last name', 'text', 'family-name'],
  ['password', 'Password', 'password', 'new-password'],
  ['password_confirm', 'Confirm password', 'password', 'new-password'],
] as const;

export function RegisterPage() {
  const [values, setValues] = useState<Record<string, string>>({});
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
            await api('/api/auth/register/', { method: 'POST', json: values });
            await signIn(values.email ?? '', values.password ?? '');
            navigate('/profile');
          } catch (e) {
            setError(asError(e));
          } finally {
            setBusy(false);
          }
        })()
      }
    >
      <h1>Register</h1>
      {general && (
        <p class="error" role="alert">
          {general}
        </p>
      )}
      {FIELDS.map(([name, label, type, autocomplete]) => (
        <div key={name} class="form-field">
          <label for={`register-${name}`}>{label}</label>
          <input
            id={`register-${name}`}
            type={type as 'text'}
            autocomplete={autocomplete}
            required
            value={values[name] ?? ''}
            aria-invalid={field(name) ? 'true' : undefined}
            aria-describedby={`register-${name}-error`}
            onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
          />
          <FieldError id={`register-${name}-error`} message={field(name)} />
        </div>
      ))}
      <button type="submit" disabled={busy}>
        Register
      </button>
    </form>
  );
}
