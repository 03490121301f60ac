#!/usr/bin/env python3
"""The naive SGEMM of kernels/matmul/01_naive.cu, written for Numba's CUDA
simulator (run with NUMBA_ENABLE_CUDASIM=1): same indexing (threadIdx.x picks
the row), block (16,16), grid (ceil(M/16), ceil(N/16)), float32. Checks the result against NumPy, then
prints one JSON line: {"numba_cudasim_naive_sgemm_ms": ...}.
Usage: NUMBA_ENABLE_CUDASIM=1 /usr/bin/python3 bench/emu_numba_sgemm.py [SIZE]"""
import json
import math
import sys
import time

import numpy as np
from numba import cuda


@cuda.jit
def sgemm_naive(M, N, K, A, B, C):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row >= M or col >= N:
        return
    acc = np.float32(0.0)
    for k in range(K):
        acc += A[row, k] * B[k, col]
    C[row, col] = acc


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    rng = np.random.default_rng(1234)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.full((n, n), np.nan, dtype=np.float32)
    grid = (math.ceil(n / 16), math.ceil(n / 16))
    start = time.perf_counter()
    sgemm_naive[grid, (16, 16)](n, n, n, a, b, c)
    ms = (time.perf_counter() - start) * 1e3
    # fp32 dot products of length n: error within n * eps * sum|a*b| (see src/device/ops/matmul.cpp).
    bound = n * 1.2e-7 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(c - a.astype(np.float64) @ b.astype(np.float64)) <= bound), "wrong result"
    print(json.dumps({"numba_cudasim_naive_sgemm_ms": ms, "size": n}))


if __name__ == "__main__":
    main()
