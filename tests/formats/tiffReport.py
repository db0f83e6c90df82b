"""Prints, as JSON, what tifffile reads from each TIFF file named on the command line."""
import json
import sys
import xml.etree.ElementTree as ElementTree

import tifffile


def ome_pixels(xml):
    root = ElementTree.fromstring(xml)
    pixels = next(element for element in root.iter() if element.tag.endswith('}Pixels'))
    number = lambda name: float(pixels.get(name)) if pixels.get(name) is not None else None
    unit = lambda axis: pixels.get(f'PhysicalSize{axis}Unit', 'µm' if pixels.get(f'PhysicalSize{axis}') else None)
    return {
        'dimension_order': pixels.get('DimensionOrder'),
        'pixel_type': pixels.get('Type'),
        'size': {axis.lower(): int(pixels.get(f'Size{axis}')) for axis in 'XYZCT'},
        'physical_size': {
            'x': number('PhysicalSizeX'),
            'y': number('PhysicalSizeY'),
            'z': number('PhysicalSizeZ'),
            'x_unit': unit('X'),
            'y_unit': unit('Y'),
            'z_unit': unit('Z'),
        },
    }


def report(path):
    with tifffile.TiffFile(path) as tif:
        page = tif.pages[0]
        result = {
            'bigtiff': tif.is_bigtiff,
            'byte_order': 'little' if tif.byteorder == '<' else 'big',
            'width': page.imagewidth,
            'height': page.imagelength,
            'pages': len(tif.pages),
            'bits_per_sample': page.bitspersample,
            'samples_per_pixel': page.samplesperpixel,
            'compression': page.compression.name.lower(),
            'compression_code': int(page.compression),
            'photometric': page.photometric.name.lower(),
            'tiled': page.is_tiled,
            'ome_xml': tif.is_ome,
        }
        if tif.is_ome:
            result['ome'] = ome_pixels(tif.ome_metadata)
        return result


print(json.dumps({path: report(path) for path in sys.argv[1:]}))
