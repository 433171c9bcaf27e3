#!/usr/bin/env bash
# The prepared device check of the GPU engine (issue #32), run from the repository root on a
# CUDA machine with CuPy installed and nothing fetched: no pip install, the sources on
# PYTHONPATH. It prints the card, driver and CuPy version, runs the GPU tests, then the MNIST
# benchmark, whose record goes to $OUT/gpu.md and $OUT/gpu.json (OUT defaults to ./gpu-out).
# MNIST's IDX files are read from $SEMISUP_DATA (or the first argument).
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export OUT="${OUT:-$PWD/gpu-out}"
[ $# -ge 1 ] && export SEMISUP_DATA="$1"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1 | head -5
"$PY" - <<'PYEOF' 2>&1 | tee "$OUT/device.txt"
import cupy, numpy, scipy, sys
rt = cupy.cuda.runtime
p = rt.getDeviceProperties(0)
name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
print(f"card {name}, {p['totalGlobalMem'] / 2**30:.1f} GiB; CUDA driver {rt.driverGetVersion()}, "
      f"runtime {rt.runtimeGetVersion()}; CuPy {cupy.__version__}, numpy {numpy.__version__}, "
      f"scipy {scipy.__version__}, Python {sys.version.split()[0]}")
PYEOF
echo "== GPU tests"
timeout 240 "$PY" -m pytest -m gpu tests/engines -q -p no:cacheprovider -ra 2>&1 \
    | tee "$OUT/pytest-gpu.txt" | tail -40
echo "pytest exit: ${PIPESTATUS[0]}"
echo "== MNIST benchmark"
timeout 330 "$PY" -m semisup.experiments.gpu --engine cupy --out "$OUT" 2>&1 | tee "$OUT/bench.txt" | tail -60
echo "bench exit: ${PIPESTATUS[0]}"
