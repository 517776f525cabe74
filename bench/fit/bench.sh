#!/usr/bin/env bash
# Time `gpu-doctor fit` against accelerate's estimate (the peer tool) on the same configs.
#
#   bash bench/fit/bench.sh [RUNS]        # from the repo root; RUNS per config, default 5
#
# Needs target/release/gpu-doctor and python3 with torch, transformers and accelerate.
# accelerate's `estimate-memory` wants the Hub; offline its method is: build the model on the
# meta device (init_empty_weights) and sum the sizes (calculate_maximum_sizes). That is what
# is timed, in a fresh python3 each run, as a user would call it. Prints one line per config
# and the ratio of the medians (accelerate / gpu-doctor).
set -u
RUNS=${1:-5}
BIN=${BIN:-target/release/gpu-doctor}
PY=${PYTHON:-python3}
CFG_DIR=testdata/fit/configs
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-28s %14s %14s %8s\n' config gpu-doctor_s accelerate_s ratio
for cfg in "$CFG_DIR"/*.json; do
  name=$(basename "$cfg" .json)
  gd=(); ac=()
  for _ in $(seq "$RUNS"); do
    t0=$(now); "$BIN" fit --config "$cfg" --batch 8 --seq 512 --gpu-model H200 --json >/dev/null 2>&1; t1=$(now)
    gd+=("$(echo "$t1 - $t0" | bc)")
    t0=$(now)
    $PY - "$cfg" >/dev/null 2>&1 <<'PYEOF'
import json, sys
import transformers
from accelerate import init_empty_weights
from accelerate.utils import calculate_maximum_sizes
cfg = transformers.AutoConfig.for_model(**json.load(open(sys.argv[1])))
cls = {"gpt2": transformers.GPT2LMHeadModel, "llama": transformers.LlamaForCausalLM,
       "qwen2": transformers.Qwen2ForCausalLM, "bert": transformers.BertForMaskedLM,
       "t5": transformers.T5ForConditionalGeneration, "vit": transformers.ViTForImageClassification}[cfg.model_type]
with init_empty_weights():
    model = cls(cfg)
total, largest = calculate_maximum_sizes(model)
print(total * 4)
PYEOF
    t1=$(now)
    ac+=("$(echo "$t1 - $t0" | bc)")
  done
  g=$(printf '%s\n' "${gd[@]}" | median); a=$(printf '%s\n' "${ac[@]}" | median)
  printf '%-28s %14.4f %14.4f %8.1f\n' "$name" "$g" "$a" "$(echo "$a / $g" | bc -l)"
done
