"""NumPy model of upres's SEABI x2 (docs/ops/seabi.md), written independently of the C++ code.

Integer arithmetic throughout; every rule here mirrors a numbered rule of the spec. Used by
tools/golden/gen_seabi_golden.py (golden data) and tools/eval_seabi.py (design exploration).
Arrays are (rows, cols) = (y, x); the low-resolution image is L (H x W, uint8), the output
Y is 2H x 2W, co-sited: Y[2y, 2x] = L[y, x].
"""
import numpy as np

# Gaussian blur taps in units of 2^-23 (the paper's integers, centre tap renormalised so the
# taps sum to exactly 2^23; the paper's 5577619 makes them sum to 8402315).
HG = np.array([21559, 1390789, 8388608 - 2 * (21559 + 1390789), 1390789, 21559], np.int64)
# Back-projection filter P = 2*delta - g (x) g, g = (1, 42, 170, 42, 1) / 256, in units of 2^-16.
GB = np.array([1, 42, 170, 42, 1], np.int64)
P5 = -np.outer(GB, GB)
P5[2, 2] += 2 << 16
HV_SCALE = 4  # directional tests of the construction compare against 4 T
D_SCALE = 4


def _cells(L):
    h, w = L.shape
    P = np.pad(L.astype(np.int64), 2, mode='edge')
    return lambda dx, dy: P[2 + dy:2 + dy + h, 2 + dx:2 + dx + w]


def c4(p0, p1, p2, p3):
    return (-p0 + 9 * p1 + 9 * p2 - p3 + 8) >> 4


def threshold(L):
    """Returns (Tq, T): Tq = floor(TV / (W H)), T = floor(sqrt(Tq))."""
    L = L.astype(np.int64)
    gx = np.zeros_like(L)
    gy = np.zeros_like(L)
    gx[:, :-1] = L[:, 1:] - L[:, :-1]
    gy[:-1, :] = L[1:, :] - L[:-1, :]
    tv = int((gx * gx + gy * gy).sum())
    tq = tv // L.size
    t = int(np.floor(np.sqrt(tq)))
    while t * t > tq:
        t -= 1
    while (t + 1) * (t + 1) <= tq:
        t += 1
    return tq, t


def _interleave(a, H, V, D):
    h, w = a.shape
    out = np.zeros((2 * h, 2 * w), np.int64)
    out[0::2, 0::2] = a
    out[0::2, 1::2] = H
    out[1::2, 0::2] = V
    out[1::2, 1::2] = D
    return out


def _hv(p, a, b, c, d, t, transpose):
    """Fig. 6 rule for the horizontal (or, transposed, vertical) new sample. t: threshold
    (construction: 4T; CxHD: 0). Returns (value_if_no_dominant_orientation_is_cubic)."""
    if not transpose:
        A = 2 * abs(a - b) - (abs(p(0, -1) - c) + abs(p(1, -1) - d))
        B = abs(p(0, -1) - d) - abs(p(1, -1) - c)
        cub = c4(p(-1, 0), a, b, p(2, 0))
        bil = (a + b + 1) >> 1
        ne = (p(1, -1) + c + 1) >> 1
        nw = (p(0, -1) + d + 1) >> 1
    else:
        A = 2 * abs(a - c) - (abs(p(-1, 0) - b) + abs(p(-1, 1) - d))
        B = abs(p(-1, 0) - d) - abs(p(-1, 1) - b)
        cub = c4(p(0, -1), a, c, p(0, 2))
        bil = (a + c + 1) >> 1
        ne = (p(-1, 1) + b + 1) >> 1
        nw = (p(-1, 0) + d + 1) >> 1
    across = np.where(B > t, ne, np.where(B < -t, nw, bil))
    return A, cub, bil, across


def lseai(L):
    tq, t = threshold(L)
    p = _cells(L)
    a, b, c, d = p(0, 0), p(1, 0), p(0, 1), p(1, 1)
    e = (b - a) ** 2 + (c - a) ** 2 + (d - c) ** 2 + (d - b) ** 2
    hom = 2 * e <= tq
    th = HV_SCALE * t
    out = []
    for tr in (False, True):
        A, cub, bil, across = _hv(p, a, b, c, d, th, tr)
        out.append(np.where(hom, bil, np.where(A < -th, cub, np.where(A > th, across, cub))))
    D1 = 2 * abs(a - d) + abs(p(-1, -1) - a) + abs(d - p(2, 2))
    D2 = 2 * abs(b - c) + abs(p(2, -1) - b) + abs(c - p(-1, 2))
    v = [(-p(k, -1) + 9 * p(k, 0) + 9 * p(k, 1) - p(k, 2)) for k in (-1, 0, 1, 2)]
    sep = (-v[0] + 9 * v[1] + 9 * v[2] - v[3] + 128) >> 8
    td = D_SCALE * t
    D = np.where(hom, (a + b + c + d + 2) >> 2,
                 np.where(D2 - D1 > td, c4(p(-1, -1), a, d, p(2, 2)),
                          np.where(D1 - D2 > td, c4(p(2, -1), b, c, p(-1, 2)), sep)))
    return np.clip(_interleave(a, out[0], out[1], D), 0, 255)


def blur_decimate(Y):
    Y = Y.astype(np.int64)
    H2, W2 = Y.shape
    Yp = np.pad(Y, 2, mode='edge')
    t = sum(HG[k] * Yp[k:k + H2:2, :] for k in range(5))
    t = (t + (1 << 22)) >> 23
    return (sum(HG[k] * t[:, k:k + W2:2] for k in range(5)) + (1 << 22)) >> 23


def cxhd(E):
    p = _cells(E)
    a, b, c, d = p(0, 0), p(1, 0), p(0, 1), p(1, 1)
    out = []
    for tr in (False, True):
        A, cub, bil, across = _hv(p, a, b, c, d, 0, tr)
        out.append(np.where(A < 0, cub, np.where(A > 0, across, bil)))
    d1 = abs(a - d)
    d2 = abs(b - c)
    D = np.where(d1 < d2, (a + d + 1) >> 1, np.where(d1 > d2, (b + c + 1) >> 1, (a + b + c + d + 2) >> 2))
    return _interleave(a, out[0], out[1], D)


def back_project(Eh):
    H2, W2 = Eh.shape
    Ep = np.pad(Eh, 2, mode='edge')
    acc = np.zeros((H2, W2), np.int64)
    for ky in range(5):
        for kx in range(5):
            acc += P5[ky, kx] * Ep[ky:ky + H2, kx:kx + W2]
    return (acc + (1 << 15)) >> 16


def seabi(L, method='silseabi', max_iterations=4, max_error=0.5):
    """Returns (Y, iterations_applied, l1 list)."""
    L = L.astype(np.int64)
    Y = lseai(L)
    if method == 'lseai':
        return Y, 0, []
    iters = 1 if method == 'silseabi' else max_iterations
    l1s = []
    applied = 0
    for _ in range(iters):
        E = L - blur_decimate(Y)
        l1 = int(abs(E).sum())
        l1s.append(l1)
        if method == 'lseabi' and l1 < max_error * L.size:
            break
        Y = np.clip(Y + back_project(cxhd(E)), 0, 255)
        applied += 1
    return Y, applied, l1s


def sep_up(L, k, shift):
    """Co-sited separable x2 interpolation with an even-length half-sample FIR k / 2^shift:
    horizontal pass then vertical, each rounded (half up) and clamped to [0, 255]."""
    k = np.asarray(k, np.int64)
    r = len(k) // 2

    def ax(a):
        n = a.shape[1]
        ap = np.pad(a.astype(np.int64), ((0, 0), (r - 1, r)), mode='edge')
        half = sum(k[m] * ap[:, m:m + n] for m in range(len(k)))
        half = np.clip((half + (1 << (shift - 1))) >> shift, 0, 255)
        out = np.zeros((a.shape[0], 2 * n), np.int64)
        out[:, 0::2] = a
        out[:, 1::2] = half
        return out

    return ax(ax(L).T).T


def tap4(L):
    return sep_up(L, [-1, 9, 9, -1], 4)


def tap6(L):
    return sep_up(L, [1, -5, 20, 20, -5, 1], 5)


def bilinear(L):
    """Co-sited bilinear x2 in float, rounded half to even (as upres::warp on u8)."""
    L = L.astype(np.float64)
    Lp = np.pad(L, ((0, 1), (0, 1)), mode='edge')
    a, b, c, d = Lp[:-1, :-1], Lp[:-1, 1:], Lp[1:, :-1], Lp[1:, 1:]
    out = _interleave(np.zeros(a.shape, np.int64), 0, 0, 0).astype(np.float64)
    out[0::2, 0::2] = a
    out[0::2, 1::2] = (a + b) / 2
    out[1::2, 0::2] = (a + c) / 2
    out[1::2, 1::2] = (a + b + c + d) / 4
    return np.clip(np.rint(out), 0, 255).astype(np.int64)


# ---------------------------------------------------------------- centre-aligned lattice (C2-C7)
# Output X samples input X / 2 - 1/4. Block k (0..W) has a = L[k - 1] (clamped); it holds the
# four outputs at the quarter points of the square a, b, c, d, written at output (2k - 1 + i).

# C5 blur taps (2^-16), the R5 Gaussian sampled 0.5, 1.5, 2.5 output pixels from the centre.
CG = np.array([8, 1927, 30833, 30833, 1927, 8], np.int64)


def _blocks(L):
    h, w = L.shape
    P = np.pad(L.astype(np.int64), 3, mode='edge')
    return lambda dx, dy: P[2 + dy:2 + dy + h + 1, 2 + dx:2 + dx + w + 1]


def k4q(p0, p1, p2, p3):
    """Keys cubic (a = -0.5) a quarter of the way from p1 to p2."""
    return (-9 * p0 + 111 * p1 + 29 * p2 - 3 * p3 + 64) >> 7


def _assemble(q00, q10, q01, q11):
    h, w = q00.shape
    Y = np.zeros((2 * h, 2 * w), np.int64)
    Y[0::2, 0::2] = q00
    Y[0::2, 1::2] = q10
    Y[1::2, 0::2] = q01
    Y[1::2, 1::2] = q11
    return Y[1:-1, 1:-1]


def _bilinear_q(a, b, c, d):
    return ((9 * a + 3 * b + 3 * c + d + 8) >> 4, (3 * a + 9 * b + c + 3 * d + 8) >> 4,
            (3 * a + b + 9 * c + 3 * d + 8) >> 4, (a + 3 * b + 3 * c + 9 * d + 8) >> 4)


def _cubic_q(p):
    KA, KC = (-9, 111, 29, -3), (-3, 29, 111, -9)
    top = [sum(KA[j] * p(k, j - 1) for j in range(4)) for k in (-1, 0, 1, 2)]
    bot = [sum(KC[j] * p(k, j - 1) for j in range(4)) for k in (-1, 0, 1, 2)]
    f = lambda v, K: (sum(K[j] * v[j] for j in range(4)) + 8192) >> 14
    return f(top, KA), f(top, KC), f(bot, KA), f(bot, KC)


def lseai_centered(L):
    tq, t = threshold(L)
    p = _blocks(L)
    a, b, c, d = p(0, 0), p(1, 0), p(0, 1), p(1, 1)
    e = (b - a) ** 2 + (c - a) ** 2 + (d - c) ** 2 + (d - b) ** 2
    hom = 2 * e <= tq
    D1 = 2 * abs(a - d) + abs(p(-1, -1) - a) + abs(d - p(2, 2))
    D2 = 2 * abs(b - c) + abs(p(2, -1) - b) + abs(c - p(-1, 2))
    td = D_SCALE * t
    m1 = c4(p(-1, -1), a, d, p(2, 2))
    nwse = (k4q(p(-1, -1), a, d, p(2, 2)), (m1 + b + 1) >> 1, (m1 + c + 1) >> 1,
            k4q(p(2, 2), d, a, p(-1, -1)))
    m2 = c4(p(2, -1), b, c, p(-1, 2))
    nesw = ((a + m2 + 1) >> 1, k4q(p(2, -1), b, c, p(-1, 2)), k4q(p(-1, 2), c, b, p(2, -1)),
            (d + m2 + 1) >> 1)
    bil, sep = _bilinear_q(a, b, c, d), _cubic_q(p)
    q = [np.where(hom, bil[i], np.where(D2 - D1 > td, nwse[i],
                                        np.where(D1 - D2 > td, nesw[i], sep[i])))
         for i in range(4)]
    return np.clip(_assemble(*q), 0, 255)


def blur_decimate_centered(Y):
    Y = Y.astype(np.int64)
    H2, W2 = Y.shape
    Yp = np.pad(Y, 3, mode='edge')  # LR i <- HR 2i - 2 .. 2i + 3 = padded 2i + 1 .. 2i + 6
    t = (sum(CG[m] * Yp[1 + m:1 + m + H2:2, 3:3 + W2] for m in range(6)) + (1 << 15)) >> 16
    tp = np.pad(t, ((0, 0), (3, 3)), mode='edge')
    return (sum(CG[m] * tp[:, 1 + m:1 + m + W2:2] for m in range(6)) + (1 << 15)) >> 16


def cubic_up_centered(E):
    return _assemble(*_cubic_q(_blocks(E)))


def seabi_centered(L, method='silseabi', max_iterations=4, max_error=0.25):
    """Returns (Y, iterations_applied, l1 list) on the centre-aligned lattice."""
    L = L.astype(np.int64)
    Y = lseai_centered(L)
    if method == 'lseai':
        return Y, 0, []
    iters = 1 if method == 'silseabi' else max_iterations
    l1s, applied = [], 0
    for _ in range(iters):
        E = L - blur_decimate_centered(Y)
        l1 = int(abs(E).sum())
        l1s.append(l1)
        if method == 'lseabi' and l1 < max_error * L.size:
            break
        Y = np.clip(Y + back_project(cubic_up_centered(E)), 0, 255)
        applied += 1
    return Y, applied, l1s


def _quarter_up(L, tap6):
    """Centre-aligned x2 along axis 1: output X from input k = (X + 1) // 2 - 3 .. + 2."""
    L = L.astype(np.int64)
    n = L.shape[1]
    P = np.pad(L, ((0, 0), (4, 4)), mode='edge')
    out = np.zeros((L.shape[0], 2 * n), np.int64)
    for X in range(2 * n):
        k = (X + 1) // 2
        p = [P[:, 4 + k - 3 + j] for j in range(6)]
        mirror = X % 2 == 0
        if not tap6:
            v = k4q(p[4], p[3], p[2], p[1]) if mirror else k4q(p[1], p[2], p[3], p[4])
            out[:, X] = np.clip(v, 0, 255)
        else:
            half = np.clip((p[0] + p[5] - 5 * (p[1] + p[4]) + 20 * (p[2] + p[3]) + 16) >> 5, 0, 255)
            out[:, X] = ((p[3] if mirror else p[2]) + half + 1) >> 1
    return out


def tap4_centered(L):
    return _quarter_up(_quarter_up(L, False).T, False).T


def tap6_centered(L):
    return _quarter_up(_quarter_up(L, True).T, True).T
