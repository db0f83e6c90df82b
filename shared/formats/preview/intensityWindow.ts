/** The intensity range mapped to black..white. */
export interface IntensityWindow {
  readonly low: number;
  readonly high: number;
}

const maxSamples = 262_144;

/**
 * The 1st and 99th percentiles of the finite values (a strided sample when there are many), so a
 * few extreme voxels do not wash the image out; the full range when those two coincide.
 */
export function intensityWindow(planes: ReadonlyArray<ArrayLike<number>>): IntensityWindow {
  const total = planes.reduce((sum, plane) => sum + plane.length, 0);
  const stride = Math.max(1, Math.ceil(total / maxSamples));
  const sample: number[] = [];
  let min = Infinity;
  let max = -Infinity;
  for (const plane of planes) {
    for (let index = 0; index < plane.length; index++) {
      const value = plane[index] ?? NaN;
      if (!Number.isFinite(value)) continue;
      if (value < min) min = value;
      if (value > max) max = value;
      if (index % stride === 0) sample.push(value);
    }
  }
  if (sample.length === 0) return { low: 0, high: 1 };
  const sorted = Float64Array.from(sample).sort();
  const low = percentile(sorted, 0.01);
  const high = percentile(sorted, 0.99);
  return high > low ? { low, high } : { low: min, high: max > min ? max : min + 1 };
}

function percentile(sorted: Float64Array, fraction: number): number {
  const index = Math.min(sorted.length - 1, Math.floor(fraction * (sorted.length - 1) + 0.5));
  return sorted[index] ?? 0;
}

export function toGray(value: number, window: IntensityWindow): number {
  if (!Number.isFinite(value)) return 0;
  const scaled = ((value - window.low) / (window.high - window.low)) * 255;
  return Math.max(0, Math.min(255, Math.round(scaled)));
}
