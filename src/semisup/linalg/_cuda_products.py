"""The CUDA kernel behind :func:`semisup.linalg.xp.product_f64` for CuPy arrays: ``K^T V``
of a float32 ``K`` and a float64 ``V`` with every product and sum in float64.

cuBLAS has no GEMM that reads float32 and accumulates in float64, and casting ``K`` would
double the memory the float32 kernel was chosen to halve. The product is bound by reading
``K`` (4 bytes an entry, ``n^2`` entries), so widening each entry as it is read costs no
more than the float32 GEMM; the arithmetic (``2 n^2 c`` float64 flops) stays below the
read time on the cards this targets (H100 / H200: ~34 float64 TFLOP/s against 3.4-4.8 TB/s).

Layout: a thread owns ``J`` columns ``j`` of ``K`` (adjacent threads, adjacent ``j``: the
reads of one row are coalesced; ``J`` of them in flight per thread) and the ``NC`` columns
of ``V``; a block of threads reads the rows of one split of ``0..m-1``, holding the split's
rows of ``V`` in shared memory, and writes its partial sums; the splits' partial sums are
added by one CuPy reduction (a fixed order: the result does not depend on the scheduling,
as atomic additions would).
"""

from __future__ import annotations

import math

#: threads per block, columns of ``K`` per thread, rows of ``V`` held in shared memory: the
#: fastest of eight settings on an H100 (8.7 ms for MNIST's kernel with 10 columns, cuBLAS's
#: float32 product 8.0 ms; tools/gpu_tune_products.py, docs/benchmarks/gpu.md)
THREADS, J, TILE = 64, 4, 64
#: blocks launched per multiprocessor (at least; through the splits of the rows)
WAVES = 64
#: at most this many columns of ``V`` per launch (wider ``V`` is done in chunks)
MAX_COLUMNS = 16

_SOURCE = r"""
extern "C" __global__ void __launch_bounds__(THREADS)
product_f64(const float* __restrict__ K, const double* __restrict__ V,
            double* __restrict__ part, const long long m, const long long n,
            const long long rows)
{
    // part[s, c, j] = sum over the rows i of split s of K[i, j] * V[i, c]; K is (m, n)
    __shared__ double Vs[TILE * NC];
    const long long j0 = (long long)blockIdx.x * (THREADS * J) + threadIdx.x;
    const long long i0 = (long long)blockIdx.y * rows;
    const long long i1 = min(i0 + rows, m);
    double acc[J][NC];
#pragma unroll
    for (int u = 0; u < J; ++u)
#pragma unroll
        for (int c = 0; c < NC; ++c) acc[u][c] = 0.0;
    for (long long t = i0; t < i1; t += TILE) {
        const int len = (int)min((long long)TILE, i1 - t);
        __syncthreads();
        for (int q = threadIdx.x; q < len * NC; q += THREADS) Vs[q] = V[t * NC + q];
        __syncthreads();
#pragma unroll 4
        for (int r = 0; r < len; ++r) {
            const float* Kr = K + (t + r) * n;
#pragma unroll
            for (int u = 0; u < J; ++u) {
                const long long j = j0 + u * THREADS;
                const double k = (j < n) ? (double)Kr[j] : 0.0;
#pragma unroll
                for (int c = 0; c < NC; ++c) acc[u][c] = fma(k, Vs[r * NC + c], acc[u][c]);
            }
        }
    }
#pragma unroll
    for (int u = 0; u < J; ++u) {
        const long long j = j0 + u * THREADS;
        if (j < n) {
#pragma unroll
            for (int c = 0; c < NC; ++c)
                part[((long long)blockIdx.y * NC + c) * n + j] = acc[u][c];
        }
    }
}
"""

_kernels = {}


def _kernel(cupy, nc, threads, j, tile):
    key = (nc, threads, j, tile)
    if key not in _kernels:
        _kernels[key] = cupy.RawKernel(
            _SOURCE, "product_f64",
            options=(f"-DTHREADS={threads}", f"-DJ={j}", f"-DTILE={tile}", f"-DNC={nc}"))
    return _kernels[key]


def product_f64(K, V, *, threads=THREADS, j=J, tile=TILE, waves=WAVES):
    """``K^T V`` (float64, ``(n, c)`` or ``(n,)`` as ``V``) of a C-contiguous float32 CuPy
    ``K`` (m, n) and a float64 CuPy ``V`` (m, c) or (m,). The keywords set the launch
    (``tools/gpu_tune_products.py`` compares them)."""
    import cupy

    m, n = K.shape
    V2 = V.reshape(m, -1)
    c = V2.shape[1]
    out = cupy.empty((n, c))
    col_blocks = math.ceil(n / (threads * j))
    # many blocks (rows split in up to 64 parts), so that the last, partial wave of blocks
    # idles the card only briefly: MNIST's kernel with 10 columns took 11.2 ms on an H100
    # at 8 blocks per multiprocessor, 9.1 ms at 64 (tools/gpu_tune_products.py); the
    # partial sums (splits x c x n float64) stay small against K
    sm = cupy.cuda.Device().attributes["MultiProcessorCount"]
    splits = max(1, min(64, math.ceil(waves * sm / col_blocks), m))
    rows = math.ceil(m / splits)
    splits = math.ceil(m / rows)
    for lo in range(0, c, MAX_COLUMNS):
        Vc = cupy.ascontiguousarray(V2[:, lo:lo + MAX_COLUMNS])
        nc = Vc.shape[1]
        part = cupy.empty((splits, nc, n))
        _kernel(cupy, nc, threads, j, tile)(
            (col_blocks, splits), (threads,),
            (K, Vc, part, cupy.int64(m), cupy.int64(n), cupy.int64(rows)))
        out[:, lo:lo + nc] = part.sum(axis=0).T
    return out if V.ndim == 2 else out[:, 0]
