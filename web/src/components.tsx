import { useEffect, useState } from 'preact/hooks';
import { type Named, api, authHeaders, localPath } from './api';

/**
 * An image of the API: a public one by URL (the browser caches it), a private one fetched with
 * the session's token (an <img> cannot send it) and shown from a blob URL.
 */
export function ApiImage(props: { src: string; alt: string; withToken: boolean; class?: string }) {
  const [blobUrl, setBlobUrl] = useState<string>();
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!props.withToken) return;
    let url: string | undefined;
    let live = true;
    void fetch(localPath(props.src), { headers: authHeaders() })
      .then(async (response) => {
        if (!response.ok) throw new Error(String(response.status));
        url = URL.createObjectURL(await response.blob());
        if (live) setBlobUrl(url);
      })
      .catch(() => live && setFailed(true));
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [props.src, props.withToken]);
  if (failed) return <p class="muted">The preview could not be loaded.</p>;
  const src = props.withToken ? blobUrl : localPath(props.src);
  return src ? (
    <img class={props.class} src={src} alt={props.alt} />
  ) : (
    <p class="muted">Loading the preview…</p>
  );
}

/** The messages about one field from a DRF-shaped 400, next to that field. */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  return message ? (
    <p class="field-error" id={id}>
      {message}
    </p>
  ) : null;
}

/** The options of a picker that searches as you type (an input's `list`): the names it offers. */
export function NameOptions({ id, names }: { id: string; names: readonly Named[] }) {
  return (
    <datalist id={id}>
      {names.map((n) => (
        <option key={n.id} value={n.name} />
      ))}
    </datalist>
  );
}

/** The atlases and categories the brain forms' pickers offer (empty until loaded, or if it fails). */
export function useAtlasesAndCategories(): { atlases: Named[]; categories: Named[] } {
  const [atlases, setAtlases] = useState<Named[]>([]);
  const [categories, setCategories] = useState<Named[]>([]);
  useEffect(() => {
    let live = true;
    void api<Named[]>('/api/atlases/').then(
      (a) => live && setAtlases(a),
      () => undefined,
    );
    void api<Named[]>('/api/categories/').then(
      (c) => live && setCategories(c),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  return { atlases, categories };
}
