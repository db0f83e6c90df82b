import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, authHeaders, formErrors, type Named } from '../api';
import { FieldError } from '../components';
import { navigate } from '../router';
import { useSession } from '../session';

interface Progress {
  readonly loaded: number;
  readonly total: number;
  readonly started: number;
  readonly now: number;
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Sends the form as multipart with XMLHttpRequest: fetch() cannot report upload progress. */
function upload(form: FormData, onProgress: (p: Progress) => void): Promise<{ readable_id: string }> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    const started = performance.now();
    request.open('POST', '/api/brains/');
    for (const [name, value] of Object.entries(authHeaders())) request.setRequestHeader(name, value);
    request.setRequestHeader('Accept', 'application/json');
    request.upload.onprogress = (event) =>
      onProgress({ loaded: event.loaded, total: event.total, started, now: performance.now() });
    request.onload = () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(request.responseText) as Record<string, unknown>;
      } catch {
        body = { detail: request.responseText.slice(0, 200) };
      }
      if (request.status === 201) resolve(body as unknown as { readable_id: string });
      else reject(new ApiError(request.status, body));
    };
    request.onerror = () => reject(new Error('the upload was interrupted (network error)'));
    request.send(form);
  });
}

function ProgressBar({ progress }: { progress: Progress }) {
  const percent = progress.total > 0 ? Math.round((progress.loaded / progress.total) * 100) : 0;
  const seconds = (progress.now - progress.started) / 1000;
  const speed = seconds > 0 ? progress.loaded / seconds : 0;
  const left = speed > 0 ? Math.ceil((progress.total - progress.loaded) / speed) : undefined;
  return (
    <div class="progress">
      <div
        role="progressbar"
        aria-label="Upload progress"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        class="progress-track"
      >
        <progress max={100} value={percent} aria-hidden="true" />
      </div>
      <p class="muted">
        {percent}% · {megabytes(progress.loaded)} of {megabytes(progress.total)} · {megabytes(speed)}/s
        {left !== undefined && ` · ${left} s left`}
      </p>
    </div>
  );
}

export function AddBrainPage() {
  const { token } = useSession();
  const [atlases, setAtlases] = useState<Named[]>([]);
  const [categories, setCategories] = useState<Named[]>([]);
  const [values, setValues] = useState<Record<string, string>>({ visibility: 'public' });
  const [file, setFile] = useState<File>();
  const [progress, setProgress] = useState<Progress>();
  const [error, setError] = useState<ApiError | Error>();
  useEffect(() => {
    document.title = 'Add brain — Brain catalogue';
    void api<Named[]>('/api/atlases/').then(setAtlases, () => undefined);
    void api<Named[]>('/api/categories/').then(setCategories, () => undefined);
  }, []);
  if (!token)
    return (
      <p>
        <a href="/signin">Sign in</a> to add a brain.
      </p>
    );
  const { field, general } = formErrors(error);
  const set = (name: string) => (event: { currentTarget: { value: string } }) =>
    setValues({ ...values, [name]: event.currentTarget.value });
  return (
    <form
      class="form narrow"
      onSubmit={(event) =>
        void (async () => {
          event.preventDefault();
          setError(undefined);
          const form = new FormData();
          form.set('name', values.name ?? '');
          if (values.description) form.set('description', values.description);
          form.set('visibility', values.visibility ?? 'public');
          // The pickers hold names (search as you type); the API takes ids (or a category's name).
          const atlas = atlases.find((a) => a.name === values.atlas);
          if (values.atlas) form.set('atlas', atlas ? String(atlas.id) : values.atlas);
          if (values.category) form.set('category', values.category);
          if (file) form.set('file', file, file.name);
          try {
            const brain = await upload(form, setProgress);
            navigate(`/brains/${encodeURIComponent(brain.readable_id)}`);
          } catch (e) {
            setProgress(undefined);
            setError(e instanceof Error ? e : new Error(String(e)));
          }
        })()
      }
    >
      <h1>Add brain</h1>
      {general && (
        <p class="error" role="alert">
          {general}
        </p>
      )}
      <label for="add-file">Scan file</label>
      <input
        id="add-file"
        type="file"
        accept=".nii,.nii.gz,.gz,.zarr,.zip,.tif,.tiff"
        required
        aria-describedby="add-file-hint add-file-error"
        onChange={(event) => setFile(event.currentTarget.files?.[0])}
      />
      <p class="muted" id="add-file-hint">
        NIfTI (.nii, .nii.gz), TIFF (.tif, .tiff) or a zipped Zarr store (.zarr).
      </p>
      <FieldError id="add-file-error" message={field('file')} />
      <label for="add-name">Name</label>
      <input
        id="add-name"
        required
        value={values.name ?? ''}
        onInput={set('name')}
        aria-describedby="add-name-error"
      />
      <FieldError id="add-name-error" message={field('name')} />
      <label for="add-atlas">Atlas</label>
      <input
        id="add-atlas"
        list="add-atlas-options"
        autocomplete="off"
        value={values.atlas ?? ''}
        onInput={set('atlas')}
        aria-describedby="add-atlas-error"
      />
      <datalist id="add-atlas-options">
        {atlases.map((a) => (
          <option key={a.id} value={a.name} />
        ))}
      </datalist>
      <FieldError id="add-atlas-error" message={field('atlas')} />
      <label for="add-category">Category</label>
      <input
        id="add-category"
        list="add-category-options"
        autocomplete="off"
        value={values.category ?? ''}
        onInput={set('category')}
        aria-describedby="add-category-error"
      />
      <datalist id="add-category-options">
        {categories.map((c) => (
          <option key={c.id} value={c.name} />
        ))}
      </datalist>
      <FieldError id="add-category-error" message={field('category')} />
      <label for="add-description">Description</label>
      <textarea id="add-description" rows={3} value={values.description ?? ''} onInput={set('description')} />
      <label for="add-visibility">Visibility</label>
      <select id="add-visibility" value={values.visibility} onChange={set('visibility')}>
        <option value="public">Public</option>
        <option value="private">Private (you and your collaborators)</option>
      </select>
      <FieldError id="add-visibility-error" message={field('visibility')} />
      <button type="submit" disabled={progress !== undefined}>
        Upload
      </button>
      {progress && <ProgressBar progress={progress} />}
    </form>
  );
}
