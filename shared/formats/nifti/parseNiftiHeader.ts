import { fail } from '#shared/formats/formatFailure';
import { loadOnce } from '#shared/formats/loadOnce';
import { lookLike } from '#shared/formats/sniffFormat';
import { niftiDatatypes, type NiftiDatatype } from './niftiCodes';

/** The header fields the catalogue uses, for NIfTI-1 and NIfTI-2 alike. */
export interface NiftiHeader {
  readonly version: 1 | 2;
  readonly littleEndian: boolean;
  readonly shape: number[];
  readonly voxelSizes: number[];
  readonly datatypeCode: number;
  readonly datatype: NiftiDatatype;
  readonly bitpix: number;
  readonly voxOffset: number;
  readonly xyztUnits: number;
  readonly qformCode: number;
  readonly sformCode: number;
  readonly qform: number[][];
  readonly sform: number[][];
  readonly description: string;
  readonly intentCode: number;
  readonly intentName: string;
  readonly intentParams: [number, number, number];
  readonly sclSlope: number;
  readonly sclInter: number;
}

/** nifti-reader-js is ESM only: imported on first use, once. */
const niftiReader = loadOnce(() => import('nifti-reader-js'));

/**
 * The header from a file's first (decompressed) bytes. nifti-reader-js decodes the fields; this
 * checks what it does not (sizeof_hdr and magic in either byte order, dims, datatype) so a wrong or
 * corrupt file fails with a reason instead of yielding garbage.
 */
export async function parseNiftiHeader(head: Buffer, rawHead: Buffer): Promise<NiftiHeader> {
  const version = versionOf(head, rawHead);
  checkMagic(head, version);
  const nifti = await niftiReader();
  const data = head.buffer.slice(head.byteOffset, head.byteOffset + head.length);
  const parsed = nifti.readHeader(data as ArrayBuffer);
  const ndim = parsed.dims[0] ?? 0;
  if (!(ndim >= 1 && ndim <= 7)) fail(`corrupt NIfTI header: dim[0] is ${ndim} (must be 1..7)`);
  const shape = parsed.dims.slice(1, ndim + 1);
  if (shape.some((size) => !(size >= 1))) {
    fail(`corrupt NIfTI header: dimensions ${shape.join('×')} (each must be at least 1)`);
  }
  const datatype = niftiDatatypes.get(parsed.datatypeCode);
  if (!datatype) fail(`unsupported NIfTI datatype code ${parsed.datatypeCode}`);
  return {
    version,
    littleEndian: parsed.littleEndian,
    shape,
    voxelSizes: parsed.pixDims.slice(1, ndim + 1),
    datatypeCode: parsed.datatypeCode,
    datatype,
    bitpix: parsed.numBitsPerVoxel,
    voxOffset: parsed.vox_offset,
    xyztUnits: parsed.xyzt_units,
    qformCode: parsed.qform_code,
    sformCode: parsed.sform_code,
    qform: parsed.getQformMat(),
    sform: readSform(head, version, parsed.littleEndian),
    description: cString(head, version === 1 ? 148 : 240, 80),
    intentCode: parsed.intent_code,
    intentName: cString(head, version === 1 ? 328 : 508, 16),
    intentParams: [parsed.intent_p1, parsed.intent_p2, parsed.intent_p3],
    sclSlope: parsed.scl_slope,
    sclInter: parsed.scl_inter,
  };
}

function versionOf(head: Buffer, rawHead: Buffer): 1 | 2 {
  if (head.length < 4) fail(`not a NIfTI file: only ${head.length} bytes${lookLike(rawHead)}`);
  const sizes = [head.readInt32LE(0), head.readInt32BE(0)];
  if (sizes.includes(348)) return checkLength(head, 348, 1);
  if (sizes.includes(540)) return checkLength(head, 540, 2);
  return fail(`not a NIfTI file: bad sizeof_hdr ${sizes[0]}${lookLike(rawHead)}`);
}

function checkLength<V extends 1 | 2>(head: Buffer, size: number, version: V): V {
  if (head.length < size) {
    fail(`truncated NIfTI-${version} header: ${head.length} of ${size} bytes`);
  }
  return version;
}

function checkMagic(head: Buffer, version: 1 | 2): void {
  const magic = head.toString('latin1', version === 1 ? 344 : 4, version === 1 ? 347 : 7);
  if (version === 1 && magic === 'ni1') {
    fail('a NIfTI-1 .hdr header of a .hdr/.img pair: upload a single-file .nii or .nii.gz');
  }
  if (magic !== `n+${version}`) {
    fail(`not a NIfTI file: no NIfTI-${version} magic (found ${JSON.stringify(magic)})`);
  }
}

/** srow_x/y/z: floats at 280 in NIfTI-1, doubles at 400 in NIfTI-2. */
function readSform(head: Buffer, version: 1 | 2, littleEndian: boolean): number[][] {
  const [start, width] = version === 1 ? [280, 4] : [400, 8];
  const at = (index: number): number => {
    const offset = start + index * width;
    if (width === 4) return littleEndian ? head.readFloatLE(offset) : head.readFloatBE(offset);
    return littleEndian ? head.readDoubleLE(offset) : head.readDoubleBE(offset);
  };
  const rows = [0, 1, 2].map((row) => [0, 1, 2, 3].map((column) => at(row * 4 + column)));
  return [...rows, [0, 0, 0, 1]];
}

/** A fixed-width header string, C style: up to its first NUL (nifti-reader-js drops NULs instead). */
function cString(head: Buffer, offset: number, length: number): string {
  const bytes = head.subarray(offset, offset + length);
  const end = bytes.indexOf(0);
  return bytes.toString('latin1', 0, end === -1 ? bytes.length : end);
}
