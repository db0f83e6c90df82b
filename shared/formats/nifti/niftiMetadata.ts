import type { Metadata } from '#shared/formats/inspection';
import { intentNames, spatialUnits, temporalUnits, xformNames } from './niftiCodes';
import type { NiftiHeader } from './parseNiftiHeader';

/** The catalogue's metadata of a NIfTI file (decisions.md "File uploads" keys and more). */
export function niftiMetadata(header: NiftiHeader, compression: 'gzip' | null): Metadata {
  const { affine, source } = bestAffine(header);
  return {
    format: 'nifti',
    nifti_version: header.version,
    byte_order: header.littleEndian ? 'little' : 'big',
    compression,
    shape: header.shape,
    voxel_sizes: header.voxelSizes.map(finite),
    datatype: header.datatype.name,
    datatype_code: header.datatypeCode,
    bitpix: header.bitpix,
    units: {
      spatial: spatialUnits.get(header.xyztUnits & 0x07) ?? 'unknown',
      temporal: temporalUnits.get(header.xyztUnits & 0x38) ?? 'unknown',
    },
    qform_code: header.qformCode,
    qform_name: xformNames.get(header.qformCode) ?? 'unknown',
    sform_code: header.sformCode,
    sform_name: xformNames.get(header.sformCode) ?? 'unknown',
    affine: affine.map((row) => row.map(finite)),
    affine_source: source,
    description: header.description,
    intent: {
      code: header.intentCode,
      label: intentNames.get(header.intentCode) ?? 'unknown',
      name: header.intentName,
      params: header.intentParams.map(finite),
    },
    scl_slope: finite(header.sclSlope),
    scl_inter: finite(header.sclInter),
    vox_offset: header.voxOffset,
  };
}

/** nibabel's get_best_affine: the sform when its code is set, else the qform, else the base affine. */
function bestAffine(header: NiftiHeader): { affine: number[][]; source: string } {
  if (header.sformCode > 0) return { affine: header.sform, source: 'sform' };
  if (header.qformCode > 0) return { affine: header.qform, source: 'qform' };
  return { affine: baseAffine(header), source: 'base' };
}

/**
 * The Analyze-style default when neither transform is set (nibabel's get_base_affine): voxel sizes
 * on the diagonal, x flipped (radiological), the centre of the volume at the origin.
 */
function baseAffine(header: NiftiHeader): number[][] {
  const zooms = [0, 1, 2].map((axis) => header.voxelSizes[axis] ?? 1);
  const shape = [0, 1, 2].map((axis) => header.shape[axis] ?? 1);
  zooms[0] = -(zooms[0] ?? 1);
  const rows = [0, 1, 2].map((row) => {
    const zoom = zooms[row] ?? 1;
    const origin = ((shape[row] ?? 1) - 1) / 2;
    return [0, 1, 2].map((column) => (column === row ? zoom : 0)).concat(-origin * zoom);
  });
  return [...rows, [0, 0, 0, 1]];
}

/** JSON has no NaN or Infinity (scl_slope is often NaN): they become null. */
function finite(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}
