"""Prints, as JSON, what nibabel reads from each NIfTI file named on the command line."""
import json
import sys

import nibabel as nib
import numpy as np


def finite(value):
    value = float(value)
    return value if np.isfinite(value) else None


def c_string(field):
    """A fixed-width header string up to its first NUL, as C readers (nifti1_io) take it."""
    return field.item().split(b'\0')[0].decode('latin1')


def report(path):
    image = nib.load(path)
    if not isinstance(image.header, nib.Nifti1Header):  # CIFTI-2: read its plain NIfTI-2 header
        image = nib.Nifti2Image.from_filename(path)
    # The header as stored: a loaded image's own header has scl_slope/inter reset to NaN.
    with nib.openers.ImageOpener(path) as stream:
        header = type(image.header).from_fileobj(stream)
    version = 2 if isinstance(header, nib.Nifti2Header) else 1
    spatial, temporal = header.get_xyzt_units()
    try:
        intent_label = header.get_intent()[0]
    except KeyError:
        intent_label = 'unknown'
    ndim = int(header['dim'][0])
    return {
        'nifti_version': version,
        'byte_order': 'little' if header.endianness == '<' else 'big',
        'shape': [int(size) for size in header['dim'][1 : ndim + 1]],
        'voxel_sizes': [finite(size) for size in header['pixdim'][1 : ndim + 1]],
        'datatype': str(header.get_value_label('datatype')),
        'datatype_code': int(header['datatype']),
        'bitpix': int(header['bitpix']),
        'units': {'spatial': spatial, 'temporal': temporal},
        'qform_code': int(header['qform_code']),
        'sform_code': int(header['sform_code']),
        'qform_name': str(header.get_value_label('qform_code')),
        'sform_name': str(header.get_value_label('sform_code')),
        'affine': header.get_best_affine().tolist(),
        'description': c_string(header['descrip']),
        'intent': {
            'code': int(header['intent_code']),
            'label': intent_label,
            'name': c_string(header['intent_name']),
            'params': [finite(header[f'intent_p{n}']) for n in (1, 2, 3)],
        },
        'scl_slope': finite(header['scl_slope']),
        'scl_inter': finite(header['scl_inter']),
        'vox_offset': int(header['vox_offset']),
    }


print(json.dumps({path: report(path) for path in sys.argv[1:]}))
