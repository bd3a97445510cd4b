#!/usr/bin/env bash
# stable_cuda's GPU check, run on the GPU machine from the bundle that tools/gpu_check/bundle.sh
# made (docs/development.md: "Checking the CUDA sampler on a GPU"). Needs no compiler, no -dev package and
# no network: the CUDA unit tests, `sampcert run --sampler stable_cuda --profile standard`,
# the benchmarks with a short min-time and, where the machine's python3 has torch with CUDA,
# torch's softmax + multinomial for comparison. Everything goes into one results folder;
# summary.txt is the short version. Each step has a time limit, and the limits add up to
# 360 s: the whole takes under 6 minutes whatever happens.
#
# Usage: run_on_gpu.sh [results folder]            (from inside the bundle)
#        tools/gpu_check/run_on_gpu.sh [results folder] [bundle, default build/gpu-check]
# Exit status: 0 all passed; 3 no CUDA device (everything else ran); 1 something failed.
set -uo pipefail
self="$(cd "$(dirname "$0")" && pwd)"
if [ -x "$self/bin/sampcert" ]; then
  bundle="$self"
else
  bundle="$(cd "${2:-$self/../../build/gpu-check}" && pwd)"
fi
out="${1:-$PWD/gpu-check-results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
: >"$out/summary.txt"
failed=0
no_device=0
started=$(date +%s)

say() { echo "$*" | tee -a "$out/summary.txt"; }
# step NAME SECONDS COMMAND...: runs it into NAME.log, records exit status and time.
step() {
  local name="$1" limit="$2"; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local verdict="passed"
  if grep -q "no CUDA device" "$out/$name.log"; then
    verdict="no CUDA device"
    no_device=1
    [ "$rc" -eq 0 ] || [ "$name" = "sampcert_run" ] || { verdict="FAILED"; failed=1; }
  elif [ "$rc" -eq 124 ]; then
    verdict="TIMED OUT after ${limit} s"; failed=1
  elif [ "$rc" -ne 0 ]; then
    verdict="FAILED (exit $rc)"; failed=1
  fi
  local skipped  # gtest's summary line: "[  SKIPPED ] 6 tests, listed below:"
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+ tests?,' "$out/$name.log" | grep -oE '[0-9]+' || true)
  [ -n "$skipped" ] && verdict="$verdict, $skipped tests skipped"
  say "$(printf '%-24s %s (%d s)' "$name" "$verdict" $(( $(date +%s) - t0 )))"
}

say "sampcert GPU check: $(date -u +%Y-%m-%dT%H:%M:%SZ), bundle $bundle"
sed -n '2,3p' "$bundle/MANIFEST" 2>/dev/null | tee -a "$out/summary.txt"
{ nvidia-smi 2>&1 || echo "nvidia-smi: not available"; } >"$out/device.txt"
gpu="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)"
say "device: ${gpu:-none visible to nvidia-smi (the bundled CUDA 13 runtime needs driver 580 or newer)}"
cp "$bundle/MANIFEST" "$out/" 2>/dev/null || true

# 1. Unit tests: the shared host/device math (no device needed), then the device tests.
step stable_cuda_math_test 35 "$bundle/bin/stable_cuda_math_test" \
  "--gtest_output=xml:$out/stable_cuda_math_test.xml"
step canonical_draw_cuda_test 20 "$bundle/bin/canonical_draw_cuda_test" \
  "--gtest_output=xml:$out/canonical_draw_cuda_test.xml"
step stable_cuda_sampler_test 55 "$bundle/bin/stable_cuda_sampler_test" \
  "--gtest_output=xml:$out/stable_cuda_sampler_test.xml"
# 2. Certification, as cli/certify_builtins.sh does it; first the bundle's runner on the CPU
#    sampler (quick profile), so a failure below is stable_cuda's, not the bundle's.
step sampcert_list 5 "$bundle/bin/sampcert" list
step sampcert_run_cpu_quick 15 "$bundle/bin/sampcert" run --sampler stable_cpu --profile quick \
  --jobs "$(nproc)" --out "$out/report_stable_cpu_quick"
step sampcert_run 150 "$bundle/bin/sampcert" run --sampler stable_cuda --profile standard \
  --jobs "$(nproc)" --expect "$bundle/share/expectations.json" --out "$out/report"
[ -f "$out/report/report.json" ] && say "report: $out/report/report.json"
tail -n 5 "$out/sampcert_run.log" | sed 's/^/  /' | tee -a "$out/summary.txt"
# 3. Benchmarks: short min-time, JSON for the table of docs/performance.md.
step stable_cuda_bench 50 "$bundle/bin/stable_cuda_bench" --benchmark_min_time=0.05 \
  "--benchmark_out=$out/stable_cuda_bench.json" --benchmark_out_format=json
# 4. torch's CUDA softmax + multinomial on the same shapes, where the machine has it.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  step torch_cuda_bench 30 python3 "$bundle/torch_cuda_bench.py"
else
  say "torch_cuda_bench          not run: no python3 with torch and a CUDA device"
fi

# The table: plain and top-k/top-p sampling rates, against the measured copy bandwidth.
if [ -s "$out/stable_cuda_bench.json" ] && command -v python3 >/dev/null; then
  python3 - "$out/stable_cuda_bench.json" <<'PY' | tee -a "$out/summary.txt"
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
dt = {"0": "f32", "1": "f16", "2": "bf16"}
print("| benchmark | time (us) | logits GB/s | of copy bandwidth |")
print("|---|---|---|---|")
for b in runs:
    name = b["name"]
    if "error_occurred" in b: print(f"| {name} | error: {b.get('error_message')} | | |"); continue
    gbs = b.get("bytes_per_second", 0) / 1e9
    frac = b.get("of_copy_bw")
    if name.startswith("BM_StableCuda"):
        parts = dict(p.split(":") for p in name.split("/")[1:] if ":" in p)
        name = f"{dt.get(parts.get('dtype'), '?')} batch {parts.get('batch')} V {parts.get('V')}" + \
               (" top-k+top-p" if parts.get("topk_topp") == "1" else " plain")
    print(f"| {name} | {b['real_time']:.1f} | {gbs:.0f} | {'' if frac is None else f'{frac:.2f}'} |")
# The brief's two targets, at f16 batch 256 x V 128k.
key = "BM_StableCuda/dtype:1/batch:256/V:131072/topk_topp:{}/manual_time"
by_name = {b["name"]: b for b in runs if "error_occurred" not in b}
plain, trunc = by_name.get(key.format(0)), by_name.get(key.format(1))
if plain and "of_copy_bw" in plain:
    f = plain["of_copy_bw"]
    print(f"target: plain f16 256 x 128k at {f:.2f} of copy bandwidth (>= 0.5): "
          f"{'met' if f >= 0.5 else 'MISSED'}")
if plain and trunc:
    r = trunc["real_time"] / plain["real_time"]
    print(f"target: top-k/top-p at {r:.2f}x plain (<= 3x): {'met' if r <= 3 else 'MISSED'}")
PY
fi
say "total: $(( $(date +%s) - started )) s; results in $out"
if [ "$failed" -ne 0 ]; then say "GPU check: FAILED (see the logs above)"; exit 1; fi
if [ "$no_device" -ne 0 ]; then
  say "GPU check: no CUDA device here: every step that needs none passed, the device part did not run"
  exit 3
fi
say "GPU check: passed"
