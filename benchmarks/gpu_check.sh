#!/usr/bin/env bash
# The prepared GPU check (no network needed): finds the CUDA version of the driver, installs
# the matching CuPy wheel from a folder when CuPy is missing, then runs
# `python -m benchmarks.gpu_check` (timings vs torch CUDA, seeds, layer parity, op database).
#   WHEELS=/path/to/wheels benchmarks/gpu_check.sh [--budget 270]
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu_check: nvidia-smi not found: no NVIDIA driver on this machine"; exit 2
fi
CUDA_VER=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\)\.\([0-9]*\).*/\1.\2/p' | head -1)
MAJOR=${CUDA_VER%%.*}
WHEEL="cupy-cuda${MAJOR}x"
echo "gpu_check: driver $(nvidia-smi --query-gpu=driver_version,name --format=csv,noheader | head -1), CUDA ${CUDA_VER:-?}: needs ${WHEEL}"
if ! $PY -c "import cupy" >/dev/null 2>&1; then
    DIR=${WHEELS:-wheels}
    if ls "$DIR"/cupy_cuda"${MAJOR}"x-*.whl >/dev/null 2>&1; then
        $PY -m pip install --no-index --find-links "$DIR" "$WHEEL" || exit 2
    else
        echo "gpu_check: CuPy is not installed and no ${WHEEL} wheel is in $DIR/"
        echo "  (pip download ${WHEEL} fastrlock -d $DIR on a machine with network, then rerun)"
        exit 2
    fi
fi
$PY -c "import cupy; print('gpu_check: CuPy', cupy.__version__, 'sees', cupy.cuda.runtime.getDeviceCount(), 'GPU(s)')" || exit 2
$PY -c "import torch; print('gpu_check: torch', torch.__version__, 'CUDA' if torch.cuda.is_available() else 'CPU only')" 2>/dev/null \
    || echo "gpu_check: torch not installed (the op database needs it as the oracle)"
exec timeout 300 $PY -m benchmarks.gpu_check "$@"
