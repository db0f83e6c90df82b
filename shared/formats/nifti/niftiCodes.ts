/** NIfTI datatype codes: the name (as nibabel labels them), bytes per voxel and channel layout. */
export interface NiftiDatatype {
  readonly name: string;
  readonly bytes: number;
  /** How a preview reduces one voxel to a number; undefined when it cannot. */
  readonly scalar?: 'int' | 'uint' | 'float' | 'complex' | 'rgb' | 'rgba';
}

export const niftiDatatypes: ReadonlyMap<number, NiftiDatatype> = new Map([
  [1, { name: 'binary', bytes: 1 / 8 }],
  [2, { name: 'uint8', bytes: 1, scalar: 'uint' }],
  [4, { name: 'int16', bytes: 2, scalar: 'int' }],
  [8, { name: 'int32', bytes: 4, scalar: 'int' }],
  [16, { name: 'float32', bytes: 4, scalar: 'float' }],
  [32, { name: 'complex64', bytes: 8, scalar: 'complex' }],
  [64, { name: 'float64', bytes: 8, scalar: 'float' }],
  [128, { name: 'RGB', bytes: 3, scalar: 'rgb' }],
  [256, { name: 'int8', bytes: 1, scalar: 'int' }],
  [512, { name: 'uint16', bytes: 2, scalar: 'uint' }],
  [768, { name: 'uint32', bytes: 4, scalar: 'uint' }],
  [1024, { name: 'int64', bytes: 8, scalar: 'int' }],
  [1280, { name: 'uint64', bytes: 8, scalar: 'uint' }],
  [1536, { name: 'float128', bytes: 16 }],
  [1792, { name: 'complex128', bytes: 16, scalar: 'complex' }],
  [2048, { name: 'complex256', bytes: 32 }],
  [2304, { name: 'RGBA', bytes: 4, scalar: 'rgba' }],
] satisfies Array<[number, NiftiDatatype]>);

/** xyzt_units names, as nibabel's unit_codes label them. */
export const spatialUnits: ReadonlyMap<number, string> = new Map([
  [0, 'unknown'],
  [1, 'meter'],
  [2, 'mm'],
  [3, 'micron'],
]);

export const temporalUnits: ReadonlyMap<number, string> = new Map([
  [0, 'unknown'],
  [8, 'sec'],
  [16, 'msec'],
  [24, 'usec'],
  [32, 'hz'],
  [40, 'ppm'],
  [48, 'rads'],
]);

/** qform_code / sform_code names (nibabel's xform_codes labels). */
export const xformNames: ReadonlyMap<number, string> = new Map([
  [0, 'unknown'],
  [1, 'scanner'],
  [2, 'aligned'],
  [3, 'talairach'],
  [4, 'mni'],
  [5, 'template'],
]);

/** intent_code names (nibabel's intent_codes labels, NIfTI-1 statistics and others). */
export const intentNames: ReadonlyMap<number, string> = new Map([
  [0, 'none'],
  [2, 'correlation'],
  [3, 't test'],
  [4, 'f test'],
  [5, 'z score'],
  [6, 'chi2'],
  [7, 'beta'],
  [8, 'binomial'],
  [9, 'gamma'],
  [10, 'poisson'],
  [11, 'normal'],
  [12, 'non central f test'],
  [13, 'non central chi2'],
  [14, 'logistic'],
  [15, 'laplace'],
  [16, 'uniform'],
  [17, 'non central t test'],
  [18, 'weibull'],
  [19, 'chi'],
  [20, 'inverse gaussian'],
  [21, 'extreme value 1'],
  [22, 'p value'],
  [23, 'log p value'],
  [24, 'log10 p value'],
  [1001, 'estimate'],
  [1002, 'label'],
  [1003, 'neuroname'],
  [1004, 'general matrix'],
  [1005, 'symmetric matrix'],
  [1006, 'displacement vector'],
  [1007, 'vector'],
  [1008, 'pointset'],
  [1009, 'triangle'],
  [1010, 'quaternion'],
  [1011, 'dimensionless'],
  [2001, 'time series'],
  [2002, 'node index'],
  [2003, 'rgb vector'],
  [2004, 'rgba vector'],
  [2005, 'shape'],
  [2006, 'fnirt disp field'],
  [2007, 'fnirt cubic spline coef'],
  [2008, 'fnirt dct coef'],
  [2009, 'fnirt quad spline coef'],
  [2016, 'topup cubic spline coef'],
  [2017, 'topup quad spline coef'],
  [2018, 'topup field'],
  // CIFTI-2 (nibabel.cifti2 labels)
  [3000, 'ConnUnknown'],
  [3001, 'ConnDense'],
  [3002, 'ConnDenseSeries'],
  [3003, 'ConnParcels'],
  [3004, 'ConnParcelSries'],
  [3006, 'ConnDenseScalar'],
  [3007, 'ConnDenseLabel'],
  [3008, 'ConnParcelScalr'],
  [3009, 'ConnParcelDense'],
  [3010, 'ConnDenseParcel'],
  [3011, 'ConnPPSr'],
  [3012, 'ConnPPSc'],
]);
