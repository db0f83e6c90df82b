"""Writes TIFF test files with tifffile into the folder named on the command line.

stack16.tif has 9 pages, all dark but the middle one (index 4), which has a bright square in its
centre: a preview of the middle page must show it.
"""
import os
import sys

import numpy as np
import tifffile

folder = sys.argv[1]


def path(name):
    return os.path.join(folder, name)


gray = np.full((200, 300), 20, dtype=np.uint8)
gray[80:120, 130:170] = 240
tifffile.imwrite(path('gray8.tif'), gray)

stack = np.full((9, 48, 64), 100, dtype=np.uint16)
stack[4, 16:32, 24:40] = 60000
tifffile.imwrite(path('stack16.tif'), stack, compression='zlib', photometric='minisblack')

tifffile.imwrite(path('big.tif'), np.linspace(0, 1, 2 * 40 * 48, dtype=np.float32).reshape(2, 40, 48),
                 bigtiff=True, tile=(16, 16), photometric='minisblack')

rgb = np.zeros((60, 80, 3), dtype=np.uint8)
rgb[20:40, 30:50] = (255, 255, 255)
tifffile.imwrite(path('rgb.tif'), rgb, photometric='rgb')

tifffile.imwrite(path('bigendian.tif'), (gray.astype(np.int16) * 10), byteorder='>')

volume = np.full((5, 64, 48), 50, dtype=np.uint16)
volume[2, 24:40, 16:32] = 4000
tifffile.imwrite(
    path('volume.ome.tif'),
    volume,
    ome=True,
    photometric='minisblack',
    metadata={
        'axes': 'ZYX',
        'PhysicalSizeX': 0.5,
        'PhysicalSizeXUnit': 'µm',
        'PhysicalSizeY': 0.5,
        'PhysicalSizeYUnit': 'µm',
        'PhysicalSizeZ': 2.0,
        'PhysicalSizeZUnit': 'µm',
    },
)

tifffile.imwrite(path('wide.tif'), np.tile(np.arange(3000, dtype=np.uint16) % 256, (100, 1)))
