#!/usr/bin/python3
"""Golden data for tests/ops/brisque_test.cpp (re-runnable; writes tests/data/brisque/).

The reference implementation the issue names: the `brisque` package from PyPI (Apache-2.0,
github.com/rehanguha/brisque), whose model upres ships (models/brisque_svm.txt and
models/brisque_range.txt, converted by this script from the package's svm.txt and
normalize.pickle). For each eval photo of tools/data/manifest.tsv (read by OpenCV, converted
to RGB): the package's 36 features (its calculate_brisque_features on skimage's rgb2gray and on
cv2.resize(gray, fx=0.5, fy=0.5, INTER_CUBIC)) and its score (libsvm's prediction).

Run (the package and libsvm-official installed, e.g. with pip --target):
    pip install --target /tmp/brq --no-deps brisque==0.2.0 libsvm-official requests \\
        urllib3 idna charset_normalizer certifi
    PYTHONPATH=/tmp/brq /usr/bin/python3 tools/golden/gen_brisque.py [--models]
--models also (re)writes the two model files from the package's.
"""
import os
import pickle
import shutil
import sys

import cv2
import numpy as np
import skimage
import skimage.color

import brisque
from brisque import BRISQUE
from brisque.models import MODEL_PATH

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, 'tests', 'data', 'brisque')


def main():
    os.makedirs(OUT, exist_ok=True)
    if '--models' in sys.argv:
        shutil.copyfile(os.path.join(MODEL_PATH, 'svm.txt'),
                        os.path.join(ROOT, 'models', 'brisque_svm.txt'))
        with open(os.path.join(MODEL_PATH, 'normalize.pickle'), 'rb') as f:
            p = pickle.load(f)
        with open(os.path.join(ROOT, 'models', 'brisque_range.txt'), 'w') as f:
            f.write('# BRISQUE feature ranges (min max per feature, 36 lines): the brisque '
                    'package 0.2.0 normalize.pickle (Apache-2.0)\n')
            for lo, hi in zip(p['min_'], p['max_']):
                f.write(f'{float(lo)!r} {float(hi)!r}\n')
    names = [l.split('\t')[0] for l in open(os.path.join(ROOT, 'tools/data/manifest.tsv'))
             if not l.startswith('#') and l.split('\t')[1] == 'eval']
    obj = BRISQUE(url=False)
    feats, scores = [], []
    for name in names:
        rgb = cv2.imread(os.path.join(ROOT, 'data', name), cv2.IMREAD_COLOR)[..., ::-1]
        gray = skimage.color.rgb2gray(rgb)
        f1 = obj.calculate_brisque_features(gray, kernel_size=7, sigma=7 / 6)
        half = cv2.resize(gray, None, fx=1 / 2, fy=1 / 2, interpolation=cv2.INTER_CUBIC)
        f2 = obj.calculate_brisque_features(half, kernel_size=7, sigma=7 / 6)
        f = np.array([float(v) for v in np.concatenate((f1, f2))])
        feats.append(f)
        scores.append(float(obj.score(np.ascontiguousarray(rgb))))
        print(name, scores[-1], file=sys.stderr)
    np.save(os.path.join(OUT, 'eval_features.npy'), np.array(feats, dtype=np.float32))
    np.save(os.path.join(OUT, 'eval_scores.npy'), np.array(scores, dtype=np.float32).reshape(1, -1))
    with open(os.path.join(OUT, 'MANIFEST'), 'w') as f:
        f.write('generator: tools/golden/gen_brisque.py\n')
        f.write(f'brisque {getattr(brisque, "__version__", "0.2.0")}, numpy {np.__version__}, '
                f'scikit-image {skimage.__version__}, opencv {cv2.__version__}\n')
        f.write('eval_features.npy: 8 x 36 float32 (rows: ' + ', '.join(names) + ')\n')
        f.write('eval_scores.npy: 1 x 8, the same order\n')


if __name__ == '__main__':
    main()
