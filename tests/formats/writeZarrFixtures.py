"""Writes Zarr stores, zipped as a .zarr upload is, into the folder named on the command line, and
prints what the writing tools report of them as JSON.

- v2_ome.zarr: python3-zarr 2.13 writes an OME-NGFF 0.4 multiscale group (levels 0 and 1, zlib),
  zipped under a top-level "image.zarr/" folder. Each level has a bright cube in its middle.
- v2_blosc.zarr: a plain zarr array with zarr's default compressor (Blosc), zipped at the root; a
  left-to-right, top-to-bottom ramp (0..1199).
- v2_lzma.zarr: the same with LZMA, which the preview does not decode.
- v3_ome.zarr: a Zarr v3 store written by this script by the v3 specification (zarr 2.13 has no v3
  writer): a group zarr.json with OME-NGFF 0.5 attributes and one array "0" (bytes + gzip codecs,
  default "/" chunk keys under "c/").
"""
import gzip
import json
import os
import sys
import tempfile
import zipfile

import numpy as np
import zarr
from numcodecs import LZMA, Zlib

folder = sys.argv[1]
report = {}


def cube(shape):
    data = np.full(shape, 100, dtype=np.uint16)
    z, y, x = (size // 2 for size in shape)
    dz, dy, dx = (max(1, size // 6) for size in shape)
    data[z - dz : z + dz, y - dy : y + dy, x - dx : x + dx] = 50000
    return data


def zip_folder(source, target, prefix=''):
    with zipfile.ZipFile(target, 'w', zipfile.ZIP_DEFLATED) as archive:
        for base, _, names in os.walk(source):
            for name in sorted(names):
                path = os.path.join(base, name)
                archive.write(path, prefix + os.path.relpath(path, source))


def ngff(multiscales):
    """Each multiscale as the catalogue lists it: axes, and each dataset's path and scale."""
    return [
        {
            'name': entry.get('name'),
            'version': entry.get('version'),
            'axes': entry['axes'],
            'datasets': [
                {'path': d['path'], 'scale': next(t['scale'] for t in d['coordinateTransformations'] if t['type'] == 'scale')}
                for d in entry['datasets']
            ],
        }
        for entry in multiscales
    ]


def describe(array):
    return {
        'shape': list(array.shape),
        'chunks': list(array.chunks),
        'dtype': array.dtype.str,
        'compressor': array.compressor.get_config() if array.compressor else None,
    }


with tempfile.TemporaryDirectory() as work:
    store = os.path.join(work, 'v2_ome')
    group = zarr.open_group(store, mode='w')
    levels = [(16, 40, 48), (8, 20, 24)]
    for index, shape in enumerate(levels):
        array = group.create_dataset(str(index), data=cube(shape), chunks=(8, 20, 24), compressor=Zlib(level=5))
    axes = [
        {'name': 'z', 'type': 'space', 'unit': 'micrometer'},
        {'name': 'y', 'type': 'space', 'unit': 'micrometer'},
        {'name': 'x', 'type': 'space', 'unit': 'micrometer'},
    ]
    datasets = [
        {'path': '0', 'coordinateTransformations': [{'type': 'scale', 'scale': [2.0, 0.5, 0.5]}]},
        {'path': '1', 'coordinateTransformations': [{'type': 'scale', 'scale': [4.0, 1.0, 1.0]}]},
    ]
    group.attrs['multiscales'] = [{'version': '0.4', 'name': 'cube', 'axes': axes, 'datasets': datasets}]
    zip_folder(store, os.path.join(folder, 'v2_ome.zarr'), 'image.zarr/')
    reopened = zarr.open_group(store, mode='r')
    report['v2_ome.zarr'] = {
        'zarr_format': 2,
        'node_type': 'group',
        'root': 'image.zarr/',
        **describe(reopened['0']),
        'arrays': [{'path': name, **describe(reopened[name])} for name in ('0', '1')],
        'multiscales': ngff(reopened.attrs['multiscales']),
    }

    store = os.path.join(work, 'v2_blosc')
    array = zarr.open_array(store, mode='w', shape=(30, 40), chunks=(10, 20), dtype='<f4')
    array[:] = np.arange(1200, dtype=np.float32).reshape(30, 40)
    zip_folder(store, os.path.join(folder, 'v2_blosc.zarr'))
    with open(os.path.join(folder, 'v2_blosc.zarr'), 'rb') as inner, zipfile.ZipFile(os.path.join(folder, 'nested.zarr'), 'w') as outer:
        outer.writestr('inner.zip', inner.read())
    report['v2_blosc.zarr'] = {'zarr_format': 2, 'node_type': 'array', 'root': '', **describe(zarr.open_array(store))}

    store = os.path.join(work, 'v2_lzma')
    array = zarr.open_array(store, mode='w', shape=(30, 40), chunks=(10, 20), dtype='<f4', compressor=LZMA())
    array[:] = 1.0
    zip_folder(store, os.path.join(folder, 'v2_lzma.zarr'))

    data = cube((16, 40, 48))
    chunks = (8, 20, 24)
    array_json = {
        'zarr_format': 3,
        'node_type': 'array',
        'shape': list(data.shape),
        'data_type': 'uint16',
        'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': list(chunks)}},
        'chunk_key_encoding': {'name': 'default', 'configuration': {'separator': '/'}},
        'codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}, {'name': 'gzip', 'configuration': {'level': 5}}],
        'fill_value': 0,
        'attributes': {},
        'dimension_names': ['z', 'y', 'x'],
    }
    multiscales = [{'name': 'cube', 'axes': axes, 'datasets': datasets[:1]}]
    group_json = {'zarr_format': 3, 'node_type': 'group', 'attributes': {'ome': {'version': '0.5', 'multiscales': multiscales}}}
    with zipfile.ZipFile(os.path.join(folder, 'v3_ome.zarr'), 'w', zipfile.ZIP_STORED) as archive:
        archive.writestr('zarr.json', json.dumps(group_json))
        archive.writestr('0/zarr.json', json.dumps(array_json))
        for k in range(2):
            for j in range(2):
                for i in range(2):
                    block = data[k * 8 : (k + 1) * 8, j * 20 : (j + 1) * 20, i * 24 : (i + 1) * 24]
                    archive.writestr(f'0/c/{k}/{j}/{i}', gzip.compress(block.astype('<u2').tobytes(), 5))
    report['v3_ome.zarr'] = {
        'zarr_format': 3,
        'node_type': 'group',
        'root': '',
        'shape': array_json['shape'],
        'chunks': list(chunks),
        'dtype': 'uint16',
        'codecs': array_json['codecs'],
        'multiscales': ngff([{**multiscales[0], 'version': '0.5'}]),
    }

with zipfile.ZipFile(os.path.join(folder, 'ratio.zarr'), 'w', zipfile.ZIP_DEFLATED) as archive:
    archive.writestr('.zgroup', json.dumps({'zarr_format': 2}))
    archive.writestr('0/0.0', bytes(100 * 2**20), compresslevel=9)
with zipfile.ZipFile(os.path.join(folder, 'jsonbomb.zarr'), 'w', zipfile.ZIP_DEFLATED) as archive:
    archive.writestr('.zgroup', b'{' + b' ' * (8 * 2**20) + b'}', compresslevel=9)
with zipfile.ZipFile(os.path.join(folder, 'many.zarr'), 'w', zipfile.ZIP_STORED) as archive:
    archive.writestr('.zgroup', json.dumps({'zarr_format': 2}))
    for index in range(3000):
        archive.writestr(f'x/{index}', b'')

print(json.dumps(report))
