#!/usr/bin/env bash
# The prepared device check of the GPU engine (issue #32), run from the repository root on a
# CUDA machine with CuPy installed and nothing fetched: the project is installed there
# without its dependencies (pip --no-deps --no-build-isolation into a temporary folder; the
# machine's CuPy, numpy, scipy and scikit-learn are used), or, where that pip cannot build
# it (e.g. a setuptools older than the build needs), the sources run from src/ (said in the
# output and in $OUT/install.txt). It prints the card, driver and CuPy version, runs the GPU tests (the engine's
# functions and the estimators on CuPy input; each test file in its own process, at most
# 120 s each), then the MNIST benchmark (at most 300 s), whose record goes to $OUT/gpu.md
# and $OUT/gpu.json (OUT defaults to ./gpu-out); every output is also kept under $OUT.
# MNIST's IDX files are read from $SEMISUP_DATA (or the first argument).
set -u
cd "$(dirname "$0")/.."
export OUT="${OUT:-$PWD/gpu-out}"
export PYTHONUNBUFFERED=1
[ $# -ge 1 ] && export SEMISUP_DATA="$1"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
echo "== install"
SITE="${TMPDIR:-/tmp}/semisup-gpu-check-site"
rm -rf "$SITE"
if "$PY" -m pip install -q --no-deps --no-build-isolation --no-compile --target "$SITE" . \
        > "$OUT/install.txt" 2>&1; then
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    echo "installed into $SITE (no dependencies)" | tee -a "$OUT/install.txt"
else
    export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
    echo "pip could not build the project here ($OUT/install.txt): running the sources" \
        "from src/" | tee -a "$OUT/install.txt"
fi
"$PY" -c "import semisup; print('semisup', semisup.__version__, 'from', semisup.__file__)" \
    2>&1 | tee -a "$OUT/install.txt"
echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1 \
    | head -5 | tee "$OUT/nvidia-smi.txt"
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
# one process per file: a CUDA error that leaves the device unusable (seen once, in a
# cuSPARSE call) then fails that file's tests only
: > "$OUT/pytest-gpu.txt"
for f in tests/engines/test_gpu*.py; do
    timeout 120 "$PY" -m pytest -m gpu "$f" -q -p no:cacheprovider -ra --durations=5 2>&1 \
        | tee -a "$OUT/pytest-gpu.txt" | grep -E "passed|failed|error|FAILED|ERROR" | tail -15
    echo "pytest $f exit: ${PIPESTATUS[0]}"
done
echo "== MNIST benchmark"
timeout 300 "$PY" -m semisup.experiments.gpu --engine cupy --out "$OUT" 2>&1 | tee "$OUT/bench.txt" | tail -60
echo "bench exit: ${PIPESTATUS[0]}"
