import { useEffect, useRef, useState } from 'preact/hooks';
import { authHeaders } from '../api';

const hasWebGl2 = (): boolean => {
  try {
    return document.createElement('canvas').getContext('webgl2') !== null;
  } catch {
    return false;
  }
};

/** NiiVue's name for the bytes decides how it reads them: gzip's magic number says .nii.gz. */
function volumeName(bytes: ArrayBuffer, fileName: string | undefined): string {
  if (fileName && /\.nii(\.gz)?$/i.test(fileName)) return fileName;
  const head = new Uint8Array(bytes, 0, Math.min(2, bytes.byteLength));
  return head[0] === 0x1f && head[1] === 0x8b ? 'volume.nii.gz' : 'volume.nii';
}

type State = 'loading' | 'ready' | 'no-webgl2' | 'failed';

/** The orthogonal and 3-D views of a NIfTI volume (NiiVue, loaded only here, in its own chunk). */
export function VolumeViewer({
  url,
  withToken,
  fileName,
}: {
  url: string;
  withToken: boolean;
  fileName: string | undefined;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [state, setState] = useState<State>(() => (hasWebGl2() ? 'loading' : 'no-webgl2'));
  const [error, setError] = useState('');

  useEffect(() => {
    if (state === 'no-webgl2') return;
    let live = true;
    let cleanup: (() => void) | undefined;
    void (async () => {
      try {
        const [{ showVolume }, response] = await Promise.all([
          import('../viewer'),
          fetch(url, { headers: withToken ? authHeaders() : {} }),
        ]);
        if (!response.ok) throw new Error(`the file answered ${response.status}`);
        const bytes = await response.arrayBuffer();
        if (!live || !canvas.current) return;
        cleanup = await showVolume(canvas.current, bytes, volumeName(bytes, fileName));
        if (live) setState('ready');
      } catch (e) {
        if (!live) return;
        setError(e instanceof Error ? e.message : String(e));
        setState('failed');
      }
    })();
    return () => {
      live = false;
      cleanup?.();
    };
  }, [url, withToken]);

  return (
    <section class="viewer" aria-labelledby="viewer-heading">
      <h2 id="viewer-heading">Viewer</h2>
      {state === 'no-webgl2' ? (
        <p class="notice" role="status">
          This browser cannot show the 3-D viewer: it needs WebGL2, which is turned off or not supported here.
          The preview image and the Download link above still work.
        </p>
      ) : (
        <>
          <p class="muted" role="status" data-viewer-state={state}>
            {state === 'loading' && 'Loading the volume…'}
            {state === 'ready' && 'Drag to move the crosshair; scroll to change slice.'}
            {state === 'failed' && `The volume could not be shown: ${error}`}
          </p>
          <div class="viewer-frame">
            <canvas ref={canvas} role="img" aria-label="Volume viewer" tabIndex={0} />
          </div>
        </>
      )}
    </section>
  );
}
