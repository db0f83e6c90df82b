"""Writes NIfTI test volumes with nibabel into the folder named on the command line.

Each volume is 40 x 30 x 20 voxels: background 10, a bright cube (1000) in the middle
(x 15..24, y 10..19, z 7..12), voxel sizes 1 x 1 x 2 mm, so a preview must show the cube in the
middle of each of its three views and stretch z twice.
"""
import os
import sys

import nibabel as nib
import numpy as np

folder = sys.argv[1]
data = np.full((40, 30, 20), 10, dtype=np.int16)
data[15:25, 10:20, 7:13] = 1000
affine = np.array([[0.0, -1.0, 0.0, 20.0], [1.0, 0.0, 0.0, -15.0], [0.0, 0.0, 2.0, -20.0], [0, 0, 0, 1]])


def annotate(image, qform, sform):
    header = image.header
    header.set_xyzt_units('micron', 'msec')
    header.set_intent('t test', (12.0,), name='tmap')
    header['descrip'] = b'catalogue test volume'
    image.set_qform(affine, code=qform)
    image.set_sform(affine, code=sform)
    return image


def save(image, name):
    nib.save(image, os.path.join(folder, name))


save(annotate(nib.Nifti1Image(data, affine), 'scanner', 'mni'), 'cube_le.nii.gz')
big_endian = nib.Nifti1Header(endianness='>')
big_endian.set_data_dtype(np.float32)
save(annotate(nib.Nifti1Image(data.astype('>f4'), affine, big_endian), 'aligned', 'unknown'), 'cube_be.nii')
save(annotate(nib.Nifti2Image(data.astype(np.uint16), affine), 'talairach', 'aligned'), 'cube_n2.nii')
wide = np.zeros((1500, 4, 3), dtype=np.uint8)
wide[700:800, :, :] = 200
save(nib.Nifti1Image(wide, np.eye(4)), 'wide.nii')
