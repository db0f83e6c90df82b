import { useEffect, useState } from 'preact/hooks';
import {
  type BrainA,
  type BrainB,
  ApiError,
  api,
  apiWithEtag,
  authHeaders,
  etagRevision,
  isStaff,
  localPath,
} from '../api';
import { navigate } from '../router';
import { ApiImage } from '../components';
import { formatDate, metadataRows } from '../format';
import { useSession } from '../session';
import { EditBrainForm } from './EditBrainForm';
import { VolumeViewer } from './VolumeViewer';

const POLL_MS = 1500;
/**
 * Never revalidated from the browser's cache: the brain's ETag is its own stream's revision, which
 * processing (another stream) leaves as it is while it changes the preview and metadata shown here,
 * so a revalidation would answer 304 and keep the body from before processing ended.
 */
const FRESH = { cache: 'no-store' } as const;

type UploadStatus = 'uploaded' | 'processing' | 'completed' | 'failed';

interface Upload {
  readonly status: UploadStatus;
  readonly filename: string;
  readonly metadata: Record<string, unknown>;
}

/** The file's state as anyone can tell it: metadata (or an error) is there once processing ended. */
function statusOf(brain: BrainA, upload: Upload | undefined): UploadStatus {
  if (upload) return upload.status;
  if (typeof brain.metadata?.error === 'string') return 'failed';
  return brain.metadata && Object.keys(brain.metadata).length > 0 ? 'completed' : 'processing';
}

const finished = (status: UploadStatus) => status === 'completed' || status === 'failed';

/** Nothing left to wait for: processing failed, or ended and the brain already shows the outcome. */
function settled(brain: BrainA, upload: Upload | undefined): boolean {
  const status = statusOf(brain, upload);
  return status === 'failed' || (finished(status) && finished(statusOf(brain, undefined)));
}

type State =
  | { kind: 'loading' }
  | { kind: 'missing' }
  | { kind: 'error'; message: string }
  | { kind: 'ready'; brain: BrainA; detail: BrainB; upload: Upload | undefined };

async function loadUpload(brainId: number): Promise<Upload | undefined> {
  try {
    const uploads = await api<Upload[]>(`/api/file-uploads/?associated_brain=${brainId}`, FRESH);
    return uploads[0];
  } catch {
    return undefined; // not the uploader: the brain's own fields tell the state
  }
}

export function BrainPage({ readableId }: { readableId: string }) {
  const { token, me } = useSession();
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [confirming, setConfirming] = useState(false);
  const [actionError, setActionError] = useState<string>();
  const [editing, setEditing] = useState(false);
  /** Bumped to read the brain again (after an edit, or to edit its current version). */
  const [version, setVersion] = useState(0);
  const path = `/api/brains/${encodeURIComponent(readableId)}/`;

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setState({ kind: 'loading' });
    // While the file is processed, the page asks again until processing ends and the brain shows it.
    const poll = async (previous: { brain: BrainA; detail: BrainB }) => {
      try {
        const brain = await api<BrainA>(path, FRESH);
        const upload = token ? await loadUpload(brain.id) : undefined;
        if (!live) return;
        setState({ kind: 'ready', brain, detail: previous.detail, upload });
        if (!settled(brain, upload))
          timer = setTimeout(() => void poll({ brain, detail: previous.detail }), POLL_MS);
      } catch {
        if (live) timer = setTimeout(() => void poll(previous), POLL_MS * 2);
      }
    };
    void (async () => {
      try {
        const [brain, detail] = await Promise.all([
          api<BrainA>(path, FRESH),
          api<BrainB>(`${path}?shape=b`, FRESH),
        ]);
        const upload = token ? await loadUpload(brain.id) : undefined;
        if (!live) return;
        document.title = `${brain.name} — Brain catalogue`;
        setState({ kind: 'ready', brain, detail, upload });
        if (!settled(brain, upload)) timer = setTimeout(() => void poll({ brain, detail }), POLL_MS);
      } catch (error) {
        if (!live) return;
        if (error instanceof ApiError && error.status === 404) setState({ kind: 'missing' });
        else setState({ kind: 'error', message: error instanceof Error ? error.message : String(error) });
      }
    })();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [path, token, version]);

  /** After a save: the read side shows the PUT's revision (it follows the write within moments). */
  const saved = async (revision: number | undefined) => {
    for (let attempt = 0; revision !== undefined && attempt < 40; attempt++) {
      try {
        const { etag } = await apiWithEtag<BrainA>(path, FRESH);
        if ((etagRevision(etag) ?? -1) >= revision) break;
      } catch {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    setEditing(false);
    setVersion((v) => v + 1);
  };

  if (state.kind === 'loading') return <p role="status">Loading…</p>;
  if (state.kind === 'missing')
    return (
      <>
        <h1>Brain not found</h1>
        <p>
          There is no brain “{readableId}”, or it is not shared with you. <a href="/">Browse the catalogue</a>
          .
        </p>
      </>
    );
  if (state.kind === 'error') return <p class="error">Could not load the brain: {state.message}</p>;
  const { brain, detail, upload } = state;
  const status = statusOf(brain, upload);
  const metadata =
    upload?.metadata && Object.keys(upload.metadata).length > 0 ? upload.metadata : (brain.metadata ?? {});
  const withToken = brain.visibility !== 'public' && token !== null;
  const format = typeof metadata.format === 'string' ? metadata.format : undefined;
  const rows = metadataRows(metadata);
  return (
    <article class="brain">
      <p class="crumbs">
        <a href="/">All brains</a>
      </p>
      <h1>{brain.name}</h1>
      <div class="brain-top">
        <div>
          <dl class="fields">
            <Field label="Atlas" value={brain.atlas?.name} />
            <Field
              label="Species"
              value={brain.species ? `${brain.species.name} (${brain.species.scientific_name})` : undefined}
            />
            <Field label="Category" value={brain.species?.category?.name} />
            <Field label="Uploader" value={brain.uploader?.username} />
            <Field label="Uploaded" value={formatDate(brain.date_uploaded)} />
            <Field label="Verified" value={brain.verified ? 'Yes' : 'No'} />
            <Field label="Reference" value={brain.is_reference ? 'Yes' : 'No'} />
            <Field
              label="Visibility"
              value={
                brain.visibility + (brain.embargo_until ? ` until ${formatDate(brain.embargo_until)}` : '')
              }
            />
            <Field label="File size" value={`${brain.file_size_mb} MB`} />
            {detail.website && (
              <Field
                label="Website"
                value={
                  <a href={detail.website} rel="noopener noreferrer">
                    {detail.website}
                  </a>
                }
              />
            )}
            {detail.extra_link && (
              <Field
                label="Link"
                value={
                  <a href={detail.extra_link} rel="noopener noreferrer">
                    {detail.extra_link}
                  </a>
                }
              />
            )}
          </dl>
          {brain.description && <p class="description">{brain.description}</p>}
          <p class={`status status-${status}`} role="status">
            Upload status: <strong>{status}</strong>
          </p>
          <p>
            <DownloadLink
              url={localPath(detail.s3_url)}
              withToken={withToken}
              name={upload?.filename ?? brain.readable_id}
            />
          </p>
        </div>
        <figure class="preview">
          {brain.preview_url ? (
            <ApiImage src={brain.preview_url} alt={`Preview of ${brain.name}`} withToken={withToken} />
          ) : (
            <p class="muted">
              {finished(status) ? 'No preview for this file.' : 'The preview appears once processing ends.'}
            </p>
          )}
        </figure>
      </div>
      {me && (isStaff(me) || brain.uploader?.id === me.id) && (
        <div class="actions" role="group" aria-label="Manage this brain">
          {isStaff(me) && !brain.verified && (
            <button
              type="button"
              onClick={() =>
                void (async () => {
                  try {
                    const verified = await api<BrainA>(`/api/brains/${brain.id}/?shape=a`, {
                      method: 'PATCH',
                      json: { verified: true },
                    });
                    setState({ ...state, brain: { ...brain, verified: verified.verified } });
                  } catch (e) {
                    setActionError(e instanceof Error ? e.message : String(e));
                  }
                })()
              }
            >
              Verify
            </button>
          )}
          {!editing && (
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
          {confirming ? (
            <>
              <span>Delete “{brain.name}” and its file for good?</span>
              <button
                type="button"
                class="danger"
                onClick={() =>
                  void (async () => {
                    try {
                      await api(`/api/brains/${brain.id}/`, { method: 'DELETE' });
                      navigate('/');
                    } catch (e) {
                      setActionError(e instanceof Error ? e.message : String(e));
                    }
                  })()
                }
              >
                Yes, delete
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>
                Keep it
              </button>
            </>
          ) : (
            <button type="button" class="secondary" onClick={() => setConfirming(true)}>
              Delete
            </button>
          )}
          {actionError && (
            <p class="error" role="alert">
              {actionError}
            </p>
          )}
        </div>
      )}
      {editing && me && (isStaff(me) || brain.uploader?.id === me.id) && (
        <EditBrainForm
          brain={brain}
          onSaved={(revision) => void saved(revision)}
          onCancel={() => setEditing(false)}
          onReload={() => setVersion((v) => v + 1)}
        />
      )}
      {rows.length > 0 && (
        <table class="metadata">
          <caption>Scan metadata</caption>
          <tbody>
            {rows.map(([label, value]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td>{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {status === 'completed' && format === 'nifti' && (
        <VolumeViewer url={localPath(detail.s3_url)} withToken={withToken} fileName={upload?.filename} />
      )}
    </article>
  );
}

function Field({ label, value }: { label: string; value: preact.ComponentChildren | undefined }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{value ?? '—'}</dd>
    </>
  );
}

/** A private brain's file needs the token: fetched and saved from a blob URL instead of followed. */
function DownloadLink({ url, withToken, name }: { url: string; withToken: boolean; name: string }) {
  return (
    <a
      class="button"
      href={url}
      download
      onClick={(event) =>
        void (async () => {
          if (!withToken) return;
          event.preventDefault();
          const response = await fetch(url, { headers: authHeaders() });
          if (!response.ok) return;
          const blobUrl = URL.createObjectURL(await response.blob());
          const anchor = document.createElement('a');
          anchor.href = blobUrl;
          anchor.download = name;
          anchor.click();
          setTimeout(() => URL.revokeObjectURL(blobUrl), 60_000);
        })()
      }
    >
      Download
    </a>
  );
}
