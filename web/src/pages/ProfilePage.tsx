import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, asError } from '../api';
import { FieldError } from '../components';
import { useSession } from '../session';

interface Profile {
  readonly id: number;
  readonly username: string;
  readonly email: string;
  readonly first_name: string;
  readonly last_name: string;
  readonly bio: string;
  readonly location: string;
  readonly group?: { name: string };
}

const EDITABLE = [
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['location', 'Location'],
  ['bio', 'Bio'],
] as const;

export function ProfilePage() {
  const { token } = useSession();
  const [profile, setProfile] = useState<Profile>();
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiError | Error>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    document.title = 'Profile — Brain catalogue';
    if (!token) return;
    api<Profile>('/api/profile/')
      .then((p) => {
        setProfile(p);
        setValues({ first_name: p.first_name, last_name: p.last_name, location: p.location, bio: p.bio });
      })
      .catch((e: unknown) => setError(asError(e)));
  }, [token]);
  if (!token)
    return (
      <p>
        <a href="/signin">Sign in</a> to see your profile.
      </p>
    );
  if (!profile) return <p role="status">{error ? error.message : 'Loading…'}</p>;
  const field = (name: string) => (error instanceof ApiError ? error.fieldMessage(name) : undefined);
  return (
    <>
      <h1>Profile</h1>
      <dl class="fields">
        <dt>Username</dt>
        <dd>{profile.username}</dd>
        <dt>Email</dt>
        <dd>{profile.email}</dd>
        <dt>Group</dt>
        <dd>{profile.group?.name ?? '—'}</dd>
      </dl>
      <p>
        <a href={`/?uploader=${profile.id}`}>Your brains</a> · <a href="/tokens">Your tokens</a>
      </p>
      <form
        class="form narrow"
        onSubmit={(event) =>
          void (async () => {
            event.preventDefault();
            setError(undefined);
            setSaved(false);
            try {
              setProfile(await api<Profile>('/api/profile/', { method: 'PATCH', json: values }));
              setSaved(true);
            } catch (e) {
              setError(asError(e));
            }
          })()
        }
      >
        <h2>Edit your profile</h2>
        {EDITABLE.map(([name, label]) => (
          <div key={name} class="form-field">
            <label for={`profile-${name}`}>{label}</label>
            {name === 'bio' ? (
              <textarea
                id={`profile-${name}`}
                rows={4}
                value={values[name] ?? ''}
                aria-describedby={`profile-${name}-error`}
                onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
              />
            ) : (
              <input
                id={`profile-${name}`}
                value={values[name] ?? ''}
                aria-describedby={`profile-${name}-error`}
                onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
              />
            )}
            <FieldError id={`profile-${name}-error`} message={field(name)} />
          </div>
        ))}
        <button type="submit">Save</button>
        {saved && <p role="status">Saved.</p>}
        {error && !(error instanceof ApiError && Object.keys(error.body).some((k) => k !== 'detail')) && (
          <p class="error">{error.message}</p>
        )}
      </form>
    </>
  );
}
