"""Writes a Blosc frame of N zero bytes (zstd inside, as zarr-python would) to the path given.

Usage: writeBloscChunk.py PATH N. A chunk bomb: a few KiB that decode to N bytes.
"""
import sys

import numcodecs
import numpy as np

path, size = sys.argv[1], int(sys.argv[2])
with open(path, 'wb') as out:
    out.write(numcodecs.Blosc(cname='zstd', clevel=9).encode(np.zeros(size, dtype=np.uint8)))
