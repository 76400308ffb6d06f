"""Reader / writer of upres's SRCNN weights file (.srcnn; include/upres/srcnn.hpp,
docs/ops/srcnn.md#weights-format). All little-endian:

  16 bytes  magic "UPRES-SRCNN\\0" (12 bytes) + u32 version (1)
  u32 scale
  u32 description length n, then n bytes of UTF-8 text (at most 64 KiB)
  3 times:  u32 out, u32 in, u32 k, f32 weights[out * in * k * k] (OIHW), f32 bias[out]
  u32 CRC-32 (zlib.crc32, IEEE) of every byte before it

Layers are lists/arrays: weights shaped (out, in, k, k), bias (out,).
"""
import struct
import zlib

import numpy as np

MAGIC = b'UPRES-SRCNN\0'
VERSION = 1
MAX_DESCRIPTION = 64 * 1024


def dumps(scale, layers, description=''):
    desc = description.encode('utf-8')
    if len(desc) > MAX_DESCRIPTION:
        raise ValueError('description longer than 64 KiB')
    if len(layers) != 3:
        raise ValueError('SRCNN has exactly 3 layers')
    buf = bytearray(MAGIC + struct.pack('<I', VERSION))
    buf += struct.pack('<II', int(scale), len(desc)) + desc
    prev = 1
    for w, b in layers:
        w = np.ascontiguousarray(w, dtype='<f4')
        b = np.ascontiguousarray(b, dtype='<f4')
        o, i, k, k2 = w.shape
        if k != k2 or k % 2 == 0 or i != prev or b.shape != (o,):
            raise ValueError(f'bad layer shape {w.shape} / {b.shape}')
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError('non-finite weights')
        prev = o
        buf += struct.pack('<III', o, i, k) + w.tobytes() + b.tobytes()
    if prev != 1:
        raise ValueError('last layer must have 1 output channel')
    buf += struct.pack('<I', zlib.crc32(bytes(buf)) & 0xffffffff)
    return bytes(buf)


def loads(data):
    """-> dict(scale, description, layers=[(w, b)] * 3). Raises ValueError on any corruption."""
    if len(data) < 16 + 8 + 4 or data[:12] != MAGIC:
        raise ValueError('bad magic')
    (version,) = struct.unpack_from('<I', data, 12)
    if version != VERSION:
        raise ValueError(f'unsupported version {version}')
    (crc,) = struct.unpack_from('<I', data, len(data) - 4)
    if zlib.crc32(data[:-4]) & 0xffffffff != crc:
        raise ValueError('CRC-32 mismatch')
    pos = 16
    scale, n = struct.unpack_from('<II', data, pos)
    pos += 8
    desc = data[pos:pos + n].decode('utf-8')
    pos += n
    layers = []
    for _ in range(3):
        o, i, k = struct.unpack_from('<III', data, pos)
        pos += 12
        nw = o * i * k * k
        w = np.frombuffer(data, '<f4', nw, pos).reshape(o, i, k, k).astype(np.float32)
        pos += 4 * nw
        b = np.frombuffer(data, '<f4', o, pos).astype(np.float32)
        pos += 4 * o
        layers.append((w, b))
    if pos != len(data) - 4:
        raise ValueError('trailing bytes')
    return {'scale': scale, 'description': desc, 'layers': layers}


def save(path, scale, layers, description=''):
    import os
    data = dumps(scale, layers, description)
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)


def load(path):
    with open(path, 'rb') as f:
        return loads(f.read())
