import { useEffect, useState } from 'preact/hooks';
import { authHeaders, localPath } from './api';

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
