#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU, Python, cupy, numpy and Nsight Compute (ncu), but no
# pystencils or islpy: it installs warpspeed offline from benchmarks/gpu/wheels/ (made beforehand by
# prepare.sh) into a folder on PYTHONPATH beside the system's cupy, then measures, each step under its own
# time limit and all within --budget seconds (default 540):
#
#   star3d-r4 (the paper's stencil, 640x512x512, double): timing of every configuration, ncu
#     counters of the three configurations profiled on an H200 on 2026-11-26 and of a random
#     sample, board power of three configurations;
#   star3d-r1 (640x512x512), star2d-r1 (16384x16384) and star3d-r4 in float: timing of every
#     configuration, an ncu sample, the power of one configuration;
#   the power-fit benchmark (roofline_power.py): board power per inner-loop length.
#
# Rows are written as they are measured; after every step all CSVs, the logs, the step table and an
# environment description (nvidia-smi -q excerpt, ncu --version, pip freeze, ...) are packed into one
# archive, warpspeed-gpu-<date>.tar.gz, in "$OUT" if set, else in benchmarks/gpu/out/.
#
#   benchmarks/gpu/run.sh [--dry-run] [--budget SECONDS] [--device MODEL] [--gpu INDEX] [--campaign NAME]
#
# --campaign  transfer (default): the microbenchmarks of mechanisms.py (needs only cupy; run before the
#             install) and kernels the models were not fitted on (copy19-pull, box3d-r1, star3d-r1,
#             star2d-r1, star3d-r4 in float, allen-cahn), timed, a few profiled with ncu;
#             paper: the star3d-r4 campaign described above;
#             sm: the in-core microbenchmarks of sm_mechanisms.py (misaligned loads, loads per FMA,
#             FMA chains by occupancy, instruction fetch, FP32/integer mix, box and star stencils,
#             a D3Q19-like kernel folded and not) and Nsight Compute counters of a few of its
#             kernels; needs only cupy, numpy, nvcc and ncu: no wheels, no install
# --dry-run   install into a temporary folder (checks that the wheels install offline), print every
#             measurement command with its time limit, run none of them
# --device    warpspeed device model of the predictions in the rows (default H200)
# --gpu       CUDA device index (default 0)
# Environment: PYTHON (default python3), WS_EXTRA_WHEELS (another folder of wheels, e.g. numpy).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wheels="$here/wheels"
python="${PYTHON:-python3}"
dry_run=0
budget=540
device="H200"
gpu=0
campaign="transfer"
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) dry_run=1; shift ;;
        --budget) budget="$2"; shift 2 ;;
        --device) device="$2"; shift 2 ;;
        --gpu) gpu="$2"; shift 2 ;;
        --campaign) campaign="$2"; shift 2 ;;
        -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
        *) echo "error: unknown option $1 (allowed: --dry-run, --budget S, --device MODEL, --gpu N, --campaign transfer|paper|sm)" >&2; exit 2 ;;
    esac
done
if ! [[ "$budget" =~ ^[0-9]+$ && "$gpu" =~ ^[0-9]+$ ]]; then
    echo "error: --budget and --gpu take non-negative integers" >&2
    exit 2
fi
if [ "$campaign" != "transfer" ] && [ "$campaign" != "paper" ] && [ "$campaign" != "sm" ]; then
    echo "error: --campaign is transfer, paper or sm, got '$campaign'" >&2
    exit 2
fi

if [ "$campaign" = "sm" ]; then
    :   # cupy, numpy, nvcc and ncu only: no wheels
elif [ ! -f "$wheels/MANIFEST.txt" ]; then
    echo "error: no wheels in $wheels; run benchmarks/gpu/prepare.sh on a machine with internet first" >&2
    exit 2
else
    wanted="$(sed -n 's/^python_version: //p' "$wheels/MANIFEST.txt")"
    have="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)"
    if [ "$wanted" != "$have" ]; then
        echo "error: the wheels are for Python $wanted, $python is Python $have; run prepare.sh --python-version $have" >&2
        exit 2
    fi
fi

# Seconds kept back for the last packing, and the shortest step worth starting.
PACK_RESERVE_S=15
MIN_STEP_S=15
deadline=$((SECONDS + budget))

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
name="warpspeed-gpu-$stamp"
if [ -n "${OUT:-}" ]; then
    outdir="$OUT"
    work="$(mktemp -d)/$name"   # only the archive goes to $OUT
else
    outdir="$here/out"
    work="$outdir/$name"
fi
mkdir -p "$outdir" "$work/results" "$work/logs" "$work/env"
archive="$outdir/$name.tar.gz"
steps="$work/steps.tsv"
printf 'step\tlimit_s\tseconds\texit_status\n' > "$steps"

pack() {
    tar -czf "$archive.tmp" -C "$(dirname "$work")" "$name" && mv "$archive.tmp" "$archive"
}

# ---------------------------------------------------------------- steps

step() {  # step NAME LIMIT_S COMMAND...: run under min(LIMIT_S, what is left), then pack
    local step_name="$1" limit="$2"
    shift 2
    local left=$((deadline - SECONDS - PACK_RESERVE_S))
    [ "$left" -lt "$limit" ] && limit="$left"
    if [ "$limit" -lt "$MIN_STEP_S" ]; then
        printf '%s\t%s\t0\tskipped (budget spent)\n' "$step_name" "$limit" >> "$steps"
        echo "-- $step_name: skipped, the budget is spent"
        return
    fi
    if [ "$dry_run" -eq 1 ]; then
        echo "-- $step_name (at most ${limit} s): $*"
        printf '%s\t%s\t0\tdry run\n' "$step_name" "$limit" >> "$steps"
        return
    fi
    local start=$SECONDS
    echo "-- $step_name (at most ${limit} s)"
    timeout --signal=INT --kill-after=20 "$limit" "$@" > "$work/logs/$step_name.log" 2>&1
    local rc=$?
    printf '%s\t%s\t%s\t%s\n' "$step_name" "$limit" "$((SECONDS - start))" "$rc" >> "$steps"
    echo "   exit status $rc after $((SECONDS - start)) s; $(tail -n 1 "$work/logs/$step_name.log")"
    pack
}

res="$work/results"
if [ "$campaign" = "transfer" ]; then
    # needs only cupy and numpy: measured before the install, so a failed install loses nothing
    step mechanisms 150 "$python" "$here/mechanisms.py" --gpu "$gpu" --out "$res/mechanisms"
fi
if [ "$campaign" = "sm" ]; then
    # needs only cupy and numpy (and nvcc to compile its kernels in parallel; else cupy's NVRTC);
    # the script keeps within its own --budget, the step's limit leaves 30 s for a slow start
    step sm-mechanisms 150 "$python" "$here/sm_mechanisms.py" --gpu "$gpu" --budget 120 --out "$res/sm"
    if [ "$dry_run" -eq 1 ]; then
        echo "== dry run: the plan of sm_mechanisms.py (estimated on an H200)"
        "$python" "$here/sm_mechanisms.py" --dry-run --budget 120 | sed 's/^/   /'
    fi
fi

# ---------------------------------------------------------------- wheels and venv

if [ "$campaign" != "sm" ]; then
    # A folder on PYTHONPATH rather than a venv: a venv made by an interpreter that itself runs in a
    # venv (the GPU machines' python3 does) would not see that venv's cupy.
    site="$(mktemp -d)/site"
    echo "== offline install from $wheels into $site (on PYTHONPATH; the interpreter's own cupy and numpy stay visible)"
    setup_log="$work/logs/setup.log"
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
    # the installed wheel, never the checkout's sources (whose package data are laid out differently)
    export PYTHONSAFEPATH=1
    cd "$work"
    {
        # --no-deps: pip --target resolves without the interpreter's own packages (numpy), so every
        # carried wheel is installed as it is; prepare.sh downloaded the complete set
        "$python" -m pip install --no-index --no-compile --no-deps --target "$site" "$wheels"/*.whl \
            $(for d in ${WS_EXTRA_WHEELS:-}; do ls "$d"/*.whl; done) &&
        printf '#!/bin/sh\nexec "%s" -c "import sys; from warpspeed.cli import main; sys.exit(main())" "$@"\n' "$python" > "$site/../warpspeed" &&
        chmod +x "$site/../warpspeed" &&
        "$site/../warpspeed" --version &&
        "$python" -c "import pystencils, islpy, warpspeed.validation.measure, pystencils_plugin.measure_kernels; print('pystencils', pystencils.__version__)"
    } > "$setup_log" 2>&1
    status=$?
    tail -n 3 "$setup_log"
    if [ $status -ne 0 ]; then
        echo "error: the offline install failed (exit status $status); see $setup_log" >&2
        pack
        exit 1
    fi
    ws="$site/../warpspeed"
    vpy="$python"
    if [ "$dry_run" -eq 0 ] && ! "$vpy" -c "import cupy" >> "$setup_log" 2>&1; then
        echo "error: cupy cannot be imported by $python; install the cupy package of the machine's CUDA version" >&2
        pack
        exit 1
    fi
else
    ws="warpspeed-not-installed"   # the sm campaign needs no install
    vpy="$python"
fi

# ---------------------------------------------------------------- environment

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -a)"
    echo "python: $("$vpy" --version 2>&1)"
    [ "$campaign" = "sm" ] || echo "wheels: $(grep -E '^(warpspeed_commit|prepared):' "$wheels/MANIFEST.txt" | tr '\n' ' ')"
    echo "commit: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "budget_s: $budget, device model: $device, gpu: $gpu, campaign: $campaign"
} > "$work/env/summary.txt"
if [ "$dry_run" -eq 0 ]; then
    (nvidia-smi -q -i "$gpu" -d PERFORMANCE,CLOCK,POWER,MEMORY,TEMPERATURE,ECC,COMPUTE 2>&1 | head -n 300) > "$work/env/nvidia-smi-q.txt"
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.max.sm,clocks.max.mem,power.limit,memory.total \
        --format=csv -i "$gpu" > "$work/env/nvidia-smi-query.csv" 2>&1
    (ncu --version 2>&1 || echo "ncu: not found") > "$work/env/ncu-version.txt"
    (nvcc --version 2>&1 || echo "nvcc: not found (register counts of the predictions are estimated)") > "$work/env/nvcc-version.txt"
    "$vpy" -m pip freeze > "$work/env/pip-freeze.txt" 2>&1
    "$vpy" -c "import cupy; print('cupy', cupy.__version__); print('CUDA runtime', cupy.cuda.runtime.runtimeGetVersion()); print('driver API', cupy.cuda.runtime.driverGetVersion())" > "$work/env/cupy.txt" 2>&1
    lscpu 2>/dev/null | head -n 20 > "$work/env/lscpu.txt"
    pack
fi

# ---------------------------------------------------------------- steps

m=("$ws" measure --device "$device" --gpu "$gpu")
timed=(--no-ncu --repeats 15 --warmup 2)
quick=(--repeats 5 --warmup 1)
soak=(--no-ncu --power --power-seconds 5 --repeats 5 --warmup 1)
r4_recorded="8x4x32:1x1x2,32x32x1:1x1x1,256x4x1:1x2x1"
r4_power="8x4x32:1x1x2,32x32x1:1x1x1,128x4x2:1x2x1"
d3="640,512,512"
d2="16384,16384"

if [ "$campaign" = "sm" ]; then
    # Nsight Compute counters of a few kernels of the campaign (LSU instructions, L1 wavefronts,
    # pipe utilisation, stall reasons behind the timings): two points of each, one launch each
    sm_ncu_kernels='regex:^(mis_l1_f32|lf_f32_l4_f16_c8|ch_f32_c1_n64|box2d_r(1|4|7)_f(1|4)_f32|box3d_r2_f(1|2)_f64|d3q19_f64_p3_(none|y2))$'
    sm_sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
                 --section SchedulerStats --section WarpStateStats --section InstructionStats --section LaunchStats
                 --section Occupancy)
    if command -v ncu > /dev/null 2>&1 || [ "$dry_run" -eq 1 ]; then
        mkdir -p "$res/sm-ncu"
        step sm-ncu 120 ncu --csv --page raw --print-units base --clock-control none --kernel-name "$sm_ncu_kernels" \
            "${sm_sections[@]}" --metrics l1tex__data_pipe_lsu_wavefronts.sum,lts__t_sectors_srcunit_tex_op_read.sum \
            --log-file "$res/sm-ncu/ncu.csv" "$python" "$here/sm_mechanisms.py" --gpu "$gpu" --parts a,b,c,f,g \
            --only "${sm_ncu_kernels#regex:}" --points-per-kernel 2 --warmup 0 --repeats 1 --budget 100 \
            --out "$res/sm-ncu"
    else
        printf 'sm-ncu\t0\t0\tskipped (no ncu)\n' >> "$steps"
    fi
elif [ "$campaign" = "paper" ]; then
    step r4-timing 110 "${m[@]}" --kernel star3d-r4 "${timed[@]}" --out "$res/star3d-r4.timing.csv"
    step r4-ncu-recorded 60 "${m[@]}" --kernel star3d-r4 --configs "$r4_recorded" "${quick[@]}" --out "$res/star3d-r4.ncu.csv"
    step r4-ncu-sample 75 "${m[@]}" --kernel star3d-r4 --sample 24 --seed 2026 --resume "${quick[@]}" --out "$res/star3d-r4.ncu.csv"
    step r4-power 50 "${m[@]}" --kernel star3d-r4 --configs "$r4_power" "${soak[@]}" --out "$res/star3d-r4.power.csv"
    step r1-timing 60 "${m[@]}" --kernel star3d-r1 --domain "$d3" "${timed[@]}" --out "$res/star3d-r1.timing.csv"
    step r1-ncu 45 "${m[@]}" --kernel star3d-r1 --domain "$d3" --sample 12 --seed 2026 "${quick[@]}" --out "$res/star3d-r1.ncu.csv"
    step r1-power 25 "${m[@]}" --kernel star3d-r1 --domain "$d3" --configs 32x32x1:1x1x1 "${soak[@]}" --out "$res/star3d-r1.power.csv"
    step 2d-timing 40 "${m[@]}" --kernel star2d-r1 --domain "$d2" "${timed[@]}" --out "$res/star2d-r1.timing.csv"
    step 2d-ncu 50 "${m[@]}" --kernel star2d-r1 --domain "$d2" "${quick[@]}" --out "$res/star2d-r1.ncu.csv"
    step 2d-power 25 "${m[@]}" --kernel star2d-r1 --domain "$d2" --configs 256x4x1:1x1x1 "${soak[@]}" --out "$res/star2d-r1.power.csv"
    step float-timing 90 "${m[@]}" --kernel star3d-r4 --dtype float "${timed[@]}" --out "$res/star3d-r4-float.timing.csv"
    step float-ncu 40 "${m[@]}" --kernel star3d-r4 --dtype float --sample 8 --seed 2026 "${quick[@]}" --out "$res/star3d-r4-float.ncu.csv"
    step float-power 25 "${m[@]}" --kernel star3d-r4 --dtype float --configs 8x4x32:1x1x2 "${soak[@]}" --out "$res/star3d-r4-float.power.csv"
    step roofline-power 60 "$vpy" "$here/roofline_power.py" --gpu "$gpu" --seconds 3 --out "$res/roofline-power.csv"
else
    lbm_d="256,256,256"
    step copy19-timing 60 "${m[@]}" --kernel copy19-pull --domain "$lbm_d" --threads 512 --no-ncu --repeats 7 --warmup 1 --out "$res/copy19-pull.timing.csv"
    step box-timing 35 "${m[@]}" --kernel box3d-r1 --domain "$lbm_d" --sample 60 --seed 2026 --no-ncu --repeats 7 --warmup 1 --out "$res/box3d-r1.timing.csv"
    step r1-timing 35 "${m[@]}" --kernel star3d-r1 --domain "$d3" --sample 60 --seed 2026 --no-ncu --repeats 7 --warmup 1 --out "$res/star3d-r1.timing.csv"
    step 2d-timing 25 "${m[@]}" --kernel star2d-r1 --domain "$d2" --no-ncu --repeats 7 --warmup 1 --out "$res/star2d-r1.timing.csv"
    step float-timing 30 "${m[@]}" --kernel star3d-r4 --dtype float --sample 40 --seed 2026 --no-ncu --repeats 7 --warmup 1 --out "$res/star3d-r4-float.timing.csv"
    step ac-timing 35 "${m[@]}" --kernel allen-cahn --domain "$lbm_d" --threads 512 --sample 30 --seed 2026 --no-ncu --repeats 7 --warmup 1 --out "$res/allen-cahn.timing.csv"
    step copy19-ncu 30 "${m[@]}" --kernel copy19-pull --domain "$lbm_d" --threads 512 --configs "4x8x16:1x1x1,128x4x1:1x1x1,2x256x1:1x1x1,32x16x1:1x1x1" "${quick[@]}" --out "$res/copy19-pull.ncu.csv"
    step box-ncu 20 "${m[@]}" --kernel box3d-r1 --domain "$lbm_d" --configs "8x4x32:1x1x1,64x16x1:1x1x1" "${quick[@]}" --out "$res/box3d-r1.ncu.csv"
fi

if [ "$dry_run" -eq 1 ] && [ "$campaign" = "sm" ]; then
    echo "== dry run: no GPU step was run"
    rm -rf "$work"
    [ -n "${OUT:-}" ] || rmdir "$outdir" 2>/dev/null
    exit 0
fi
if [ "$dry_run" -eq 1 ]; then
    echo "== dry run: a prediction with the offline install (pystencils, islpy, scipy; no GPU)"
    "$ws" predict --kernel star3d-r4 --device "$device" --block 8,4,32 --fold 1,1,2 --json \
        | "$vpy" -c "import json, sys; d = json.load(sys.stdin); print('   star3d-r4 8x4x32 fold 1x1x2 on', d['device'], ':', round(d['lups_per_s'] / 1e9, 1), 'Glup/s predicted')" \
        || { echo "error: warpspeed predict failed in the offline install" >&2; exit 1; }
    "$ws" measure --help > /dev/null && echo "== dry run: the wheels install offline and 'warpspeed measure' runs; no GPU step was run"
    rm -rf "$(dirname "$site")"
    rm -rf "$work"
    [ -n "${OUT:-}" ] || rmdir "$outdir" 2>/dev/null
    exit 0
fi
pack
echo "== $archive"
column -t -s $'\t' "$steps" 2>/dev/null || cat "$steps"
[ -n "${OUT:-}" ] && rm -rf "$(dirname "$work")"
exit 0
