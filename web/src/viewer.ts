import { Niivue } from '@niivue/niivue';

/**
 * The NiiVue viewer, in its own chunk: only a brain page with a NIfTI volume loads it. The bytes are
 * fetched here (with the session's token for a private brain) and handed over as an ArrayBuffer.
 */
export async function showVolume(
  canvas: HTMLCanvasElement,
  bytes: ArrayBuffer,
  name: string,
): Promise<() => void> {
  const nv = new Niivue({
    backColor: [0, 0, 0, 1],
    crosshairWidth: 1,
    show3Dcrosshair: true,
    isResizeCanvas: true,
  });
  await nv.attachToCanvas(canvas);
  await nv.loadFromArrayBuffer(bytes, name);
  nv.setSliceType(nv.sliceTypeMultiplanar);
  return () => nv.cleanup();
}
