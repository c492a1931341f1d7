"""Ill-scaled test functions of the GP bench (gp_bench.py --functions
illscaled): smooth, unimodal bowls (f* = 0, the optimum off the center)
whose values span 4 to 12 decades across the box. FUNCTIONS maps a name to
(f, box, f*), as gp_bench.FUNCTIONS does.

HARD (gp_bench.py --functions hard): smooth, steep objectives whose axes
are rotated away from the parameters' and scaled differently (the
ellipsoid's condition number is 1e6), with the optimum off the center, two
coordinates within 10% of a face of the box: an ellipsoid, different
powers, an exponential of an ellipsoid and a Rosenbrock valley, each 6-D.
"""
import math


def shifted(x, offsets):
    return [v - o for v, o in zip(x, offsets)]


def power_bowl(power, offsets, weights=None):
    weights = weights or [1.0] * len(offsets)
    return lambda x: sum(w * d ** power for w, d in zip(weights, shifted(x, offsets)))


def rotation(dims, angle):
    """A fixed rotation: Givens rotations by `angle` in planes (i, i + 1)."""
    m = [[float(i == j) for j in range(dims)] for i in range(dims)]
    c, s = math.cos(angle), math.sin(angle)
    for k in range(dims - 1):
        for row in m:
            row[k], row[k + 1] = c * row[k] - s * row[k + 1], s * row[k] + c * row[k + 1]
    return m


def rotated(offsets, scales, angle):
    """x -> z with z_i = scales[i] * (R (x - offsets))_i."""
    r = rotation(len(offsets), angle)
    return lambda x: [w * sum(rij * d for rij, d in zip(row, shifted(x, offsets)))
                      for w, row in zip(scales, r)]


def rotated_bowl(power, offsets, scales, angle):
    """sum_i (scales[i] * (R (x - offsets))_i) ** power: an ill-conditioned
    bowl whose axes are not the parameters'."""
    z_of = rotated(offsets, scales, angle)
    return lambda x: sum(z ** power for z in z_of(x))


def different_powers(offsets, scales, angle):
    """sum_i |z_i| ** (2 + 4 i / (D - 1)): steeper along later axes."""
    z_of = rotated(offsets, scales, angle)
    n = len(offsets)
    return lambda x: sum(abs(z) ** (2 + 4 * i / (n - 1))
                         for i, z in enumerate(z_of(x)))


def exp_ellipsoid(rate, offsets, scales, angle):
    z_of = rotated(offsets, scales, angle)
    return lambda x: math.expm1(rate * sum(z * z for z in z_of(x)))


def rosenbrock(offsets, scales, angle):
    """Rosenbrock's valley in z + 1 (f* = 0 at x = offsets)."""
    z_of = rotated(offsets, scales, angle)

    def f(x):
        v = [z + 1 for z in z_of(x)]
        return sum(100 * (b - a * a) ** 2 + (1 - a) ** 2 for a, b in zip(v, v[1:]))
    return f


def product_bowl(offsets):
    return lambda x: math.prod(1 + d * d for d in shifted(x, offsets)) - 1


def exp_bowl(rate, offsets):
    return lambda x: math.expm1(rate * sum(d * d for d in shifted(x, offsets)))


FUNCTIONS = {
    "quartic6": (power_bowl(4, [1.7, -2.3, 0.9, -1.1, 2.6, -0.4]),
                 [(-5.0, 5.0)] * 6, 0.0),
    "rotated_quartic6": (rotated_bowl(4, [1.7, -2.3, 0.9, -1.1, 2.6, -0.4],
                                      [10 ** (i / 2) for i in range(6)], 0.6),
                         [(-5.0, 5.0)] * 6, 0.0),
    "power8_4": (power_bowl(8, [0.8, -0.5, 1.1, -1.3]), [(-2.0, 2.0)] * 4, 0.0),
    "quartic_ellipsoid4": (power_bowl(4, [-1.2, 0.7, 1.9, -0.3], [1, 10, 100, 1000]),
                           [(-3.0, 3.0)] * 4, 0.0),
    "product3": (product_bowl([2.1, -1.4, 0.6]), [(-5.0, 5.0)] * 3, 0.0),
    "exp8": (exp_bowl(0.1, [0.9, -1.6, 0.3, 1.2, -0.7, 2.0, -1.1, 0.4]),
             [(-3.0, 3.0)] * 8, 0.0),
}


# Off-center optima, two coordinates within 10% of a face of [-5, 5].
HARD_CENTER = [4.1, -3.2, 1.3, -4.6, 2.2, -0.7]
HARD = {
    "rotated_ellipsoid6": (rotated_bowl(2, HARD_CENTER,
                                        [10 ** (0.6 * i) for i in range(6)], 0.7),
                           [(-5.0, 5.0)] * 6, 0.0),
    "different_powers6": (different_powers(HARD_CENTER,
                                           [10 ** (0.2 * i) for i in range(6)], 0.5),
                          [(-5.0, 5.0)] * 6, 0.0),
    "exp_ellipsoid6": (exp_ellipsoid(5e-4, HARD_CENTER,
                                     [10 ** (0.25 * i) for i in range(6)], 0.9),
                       [(-5.0, 5.0)] * 6, 0.0),
    "rosenbrock6": (rosenbrock(HARD_CENTER, [0.4] * 6, 0.3),
                    [(-5.0, 5.0)] * 6, 0.0),
}
