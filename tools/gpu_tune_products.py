"""Times the launch settings of ``semisup.linalg.xp.product_f64``'s CUDA kernel (float32
``K``, float64 sums) against cuBLAS's float32 products, on a random n x n float32 matrix
with 10 columns (n = 70 000: all of MNIST's kernel, 18.3 GiB): what a PCG iteration of
LapRLS with ``kernel_dtype="float32"`` pays for its product. Run on a CUDA machine::

    python tools/gpu_tune_products.py [n]

Prints one line per setting: milliseconds per product (median of 10), the bandwidth of
reading ``K``, and the largest difference from the float64 product of the widened ``K``
(relative to the largest entry).
"""

import sys
import time

import cupy
import numpy as np

from semisup.linalg._cuda_products import product_f64


def _ms(fn, reps=10):
    fn()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main(n=70_000, c=10):
    rng = cupy.random.default_rng(0)
    K = rng.random((n, n), dtype=cupy.float32)
    V = rng.standard_normal((n, c))
    V32 = V.astype(cupy.float32)
    V32t = cupy.ascontiguousarray(V32.T)
    ref = cupy.concatenate([K[:, lo:lo + 4096].astype(cupy.float64).T @ V
                            for lo in range(0, n, 4096)])
    gb = K.nbytes / 1e9
    print(f"n = {n}, c = {c}, K {K.nbytes / 2**30:.2f} GiB; "
          f"{cupy.cuda.runtime.getDeviceProperties(0)['name']}")
    for name, fn in (("cuBLAS float32 K @ V", lambda: K @ V32),
                     ("cuBLAS float32 (V^T K)^T", lambda: V32t @ K)):
        ms = _ms(fn)
        print(f"{name:42s} {ms:8.3f} ms {gb / ms * 1e3:8.1f} GB/s")
    for threads, j, tile, waves in ((128, 2, 64, 8), (128, 2, 64, 64), (128, 2, 128, 64),
                                    (256, 2, 64, 64), (128, 4, 64, 64), (128, 1, 64, 64),
                                    (256, 1, 64, 64), (64, 4, 64, 64)):
        kw = dict(threads=threads, j=j, tile=tile, waves=waves)
        ms = _ms(lambda: product_f64(K, V, **kw))
        err = float(cupy.abs(product_f64(K, V, **kw) - ref).max() / cupy.abs(ref).max())
        print(f"product_f64 threads={threads:3d} j={j} tile={tile:3d} waves={waves:2d} "
              f"{ms:8.3f} ms {gb / ms * 1e3:8.1f} GB/s  rel diff {err:.1e}")
    ms = _ms(lambda: product_f64(K, V[:, 0]))
    print(f"{'product_f64 defaults, one column':42s} {ms:8.3f} ms")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
