"""The GPU tests' common start: CuPy and a CUDA device, or the module is skipped."""

import pytest


def require_cuda():
    """The ``cupy`` module; skips the calling test module (at import) without CuPy or
    without a device."""
    cupy = pytest.importorskip("cupy", reason="the GPU engine needs CuPy (extra [gpu])")
    try:
        n_devices = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no driver, or no device
        n_devices = 0
    if not n_devices:
        pytest.skip("no CUDA device", allow_module_level=True)
    return cupy
