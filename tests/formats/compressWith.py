"""Compresses bytes with a numcodecs codec, as zarr-python and imagecodecs write them.

Usage: compressWith.py blosc|zstd OUT (--zeros N | --file IN). A chunk or strip bomb is a few KiB
of --zeros that decode to N bytes; --file compresses real data.
"""
import sys

import numcodecs
import numpy as np

codec_name, out_path, source, value = sys.argv[1:5]
data = np.zeros(int(value), dtype=np.uint8) if source == '--zeros' else np.fromfile(value, dtype=np.uint8)
codec = numcodecs.Blosc(cname='zstd', clevel=9) if codec_name == 'blosc' else numcodecs.Zstd(level=9)
with open(out_path, 'wb') as out:
    out.write(codec.encode(data))
