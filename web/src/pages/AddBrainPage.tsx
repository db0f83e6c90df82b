import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../api';
import { type BrainB, api, asError, formErrors } from '../api';
import type { ResumableUpload } from '../tusUpload';
import { FieldError, NameOptions, useAtlasesAndCategories } from '../components';
import { navigate } from '../router';
import { useSession } from '../session';

interface Progress {
  readonly loaded: number;
  readonly total: number;
  /** When this stretch of sending began (performance.now()), and how many bytes were in then. */
  readonly started: number;
  readonly from: number;
  readonly now: number;
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

type Phase = 'idle' | 'uploading' | 'paused' | 'creating';

function ProgressBar({ progress }: { progress: Progress }) {
  const percent = progress.total > 0 ? Math.round((progress.loaded / progress.total) * 100) : 0;
  const seconds = (progress.now - progress.started) / 1000;
  const speed = seconds > 0 ? (progress.loaded - progress.from) / seconds : 0;
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
  const { atlases, categories } = useAtlasesAndCategories();
  const [values, setValues] = useState<Record<string, string>>({ visibility: 'public' });
  const [file, setFile] = useState<File>();
  const [progress, setProgress] = useState<Progress>();
  const [phase, setPhase] = useState<Phase>('idle');
  const [resumedFrom, setResumedFrom] = useState(0);
  const [unfinished, setUnfinished] = useState<{ filename: string; size: number | null }[]>([]);
  const [error, setError] = useState<ApiError | Error>();
  const sending = useRef<ResumableUpload>(undefined);
  /** The file whose bytes the service already has, and its upload's id: a refused create sends it no more. */
  const uploaded = useRef<{ file: File; id: string }>(undefined);
  useEffect(() => {
    document.title = 'Add brain — Brain catalogue';
    void import('../tusUpload')
      .then(({ unfinishedUploads }) => unfinishedUploads())
      .then(setUnfinished, () => undefined);
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
          if (!file || phase !== 'idle') return;
          setError(undefined);
          try {
            let id = uploaded.current?.file === file ? uploaded.current.id : undefined;
            if (id === undefined) {
              setPhase('uploading');
              const { startResumableUpload } = await import('../tusUpload');
              // Speed and time left count the bytes sent since this stretch (a start or a resume) began.
              let started = performance.now();
              let from = 0;
              let last = 0;
              const upload = await startResumableUpload(file, values.name ?? '', ({ loaded, total }) => {
                last = loaded;
                setProgress({ loaded, total, started, from: Math.min(from, loaded), now: performance.now() });
              });
              setResumedFrom(upload.resumedFrom);
              sending.current = {
                ...upload,
                resume: () => {
                  started = performance.now();
                  from = last;
                  upload.resume();
                },
              };
              started = performance.now();
              from = last = upload.resumedFrom;
              id = await upload.done;
              uploaded.current = { file, id };
              setUnfinished([]);
            }
            setPhase('creating');
            // The pickers hold names (search as you type); the API takes ids (or a category's name).
            const atlas = atlases.find((a) => a.name === values.atlas);
            const body: Record<string, unknown> = {
              name: values.name ?? '',
              visibility: values.visibility ?? 'public',
              upload: id,
            };
            if (values.description) body.description = values.description;
            if (values.atlas) body.atlas = atlas ? atlas.id : values.atlas;
            const category = categories.find((c) => c.name === values.category);
            if (values.category) body.category = category ? category.id : values.category;
            const brain = await api<BrainB & { readable_id: string }>('/api/brains/', {
              method: 'POST',
              json: body,
            });
            navigate(`/brains/${encodeURIComponent(brain.readable_id)}`);
          } catch (e) {
            setError(asError(e));
            if (!uploaded.current || uploaded.current.file !== file) setProgress(undefined);
            setPhase('idle');
          } finally {
            sending.current = undefined;
          }
        })()
      }
    >
      <h1>Add brain</h1>
      {unfinished.length > 0 && phase === 'idle' && (
        <p class="notice" role="status">
          An upload of {unfinished[0]!.filename}
          {unfinished[0]!.size !== null && ` (${megabytes(unfinished[0]!.size)})`} did not finish. Choose the
          same file again to go on from where it stopped.
        </p>
      )}
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
        onChange={(event) => {
          setFile(event.currentTarget.files?.[0]);
          setProgress(undefined);
        }}
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
      <NameOptions id="add-atlas-options" names={atlases} />
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
      <NameOptions id="add-category-options" names={categories} />
      <FieldError id="add-category-error" message={field('category')} />
      <label for="add-description">Description</label>
      <textarea id="add-description" rows={3} value={values.description ?? ''} onInput={set('description')} />
      <label for="add-visibility">Visibility</label>
      <select id="add-visibility" value={values.visibility} onChange={set('visibility')}>
        <option value="public">Public</option>
        <option value="private">Private (you and your collaborators)</option>
      </select>
      <FieldError id="add-visibility-error" message={field('visibility')} />
      <div class="actions">
        <button type="submit" disabled={phase !== 'idle'}>
          {phase === 'creating' ? 'Adding the brain…' : 'Upload'}
        </button>
        {phase === 'uploading' && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setPhase('paused');
              void sending.current?.pause();
            }}
          >
            Pause
          </button>
        )}
        {phase === 'paused' && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setPhase('uploading');
              sending.current?.resume();
            }}
          >
            Resume
          </button>
        )}
      </div>
      {resumedFrom > 0 && phase !== 'idle' && (
        <p class="muted" role="status">
          Resuming an earlier upload of this file: {megabytes(resumedFrom)} were already sent.
        </p>
      )}
      {phase === 'paused' && <p role="status">Paused. What was sent is kept.</p>}
      {progress && <ProgressBar progress={progress} />}
    </form>
  );
}
