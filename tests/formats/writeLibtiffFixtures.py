"""Writes TIFF strips compressed by libtiff itself (the reference encoder, through ctypes) into the
folder named on the command line: the same 8-bit gradient uncompressed and as LZW (with and without
the horizontal predictor), PackBits, Adobe deflate and, when this libtiff was built with it, JPEG.
Prints the names written as JSON.
"""
import ctypes
import json
import os
import sys

folder = sys.argv[1]
libtiff = ctypes.CDLL('libtiff.so.6')
libtiff.TIFFOpen.restype = ctypes.c_void_p
libtiff.TIFFOpen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libtiff.TIFFWriteScanline.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint16]
libtiff.TIFFClose.argtypes = [ctypes.c_void_p]
libtiff.TIFFIsCODECConfigured.argtypes = [ctypes.c_uint16]

WIDTH, HEIGHT = 300, 200
rows = [bytes(((x * 3 + y * 5 + (x * y) % 17) % 256) for x in range(WIDTH)) for y in range(HEIGHT)]
# compression code, predictor, file name
variants = [(1, 1, 'none.tif'), (5, 1, 'lzw.tif'), (5, 2, 'lzw_predictor.tif'), (32773, 1, 'packbits.tif'),
            (8, 1, 'adobe_deflate.tif'), (8, 2, 'adobe_deflate_predictor.tif'), (7, 1, 'jpeg.tif')]
written = []
for compression, predictor, name in variants:
    if not libtiff.TIFFIsCODECConfigured(compression):
        continue
    tif = libtiff.TIFFOpen(os.path.join(folder, name).encode(), b'w')
    fields = [(256, WIDTH), (257, HEIGHT), (258, 8), (277, 1), (262, 1), (284, 1), (278, 16), (259, compression)]
    if predictor != 1:
        fields.append((317, predictor))
    for tag, value in fields:
        libtiff.TIFFSetField(ctypes.c_void_p(tif), ctypes.c_uint32(tag), ctypes.c_uint32(value))
    for y, row in enumerate(rows):
        buffer = ctypes.create_string_buffer(row, WIDTH)
        if libtiff.TIFFWriteScanline(tif, buffer, y, 0) != 1:
            sys.exit(f'{name}: TIFFWriteScanline failed at row {y}')
    libtiff.TIFFClose(tif)
    written.append(name)
print(json.dumps(written))
