#!/bin/bash
# One lent-GPU session (device `run`): two readers trained from MiniLM for a time budget each over all the data,
# with and without the swapped details, exported to int8 ONNX in parts; then the encoder's speed on the GPU.
# Needs, carried in .gpu/: base/ (MiniLM-L6: config, fp16 safetensors, tokenizer files) and train.jsonl.gz.
# Everything it writes lands in $OUT (at most 8 files): A/, B/ (model.onnx.part-*, meta.json) and session.log.
set -u
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=true
LOG=$OUT/session.log
BUDGET=${BUDGET:-170}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | tee -a "$LOG"
for variant in A B; do
  if [ $variant = A ]; then exclude=""; else exclude="--exclude swap_names swap_figures"; fi
  python3 lab/reader/train_gpu.py --base .gpu/base --data .gpu --out /tmp/run$variant --budget-s "$BUDGET" \
    --log-every 500 $exclude 2>&1 | grep -v '"' | tee -a "$LOG"
  python3 lab/reader/train_gpu.py --base .gpu/base --data .gpu --out /tmp/run$variant --export /tmp/exp$variant \
    --split 2>&1 | tail -4 | tee -a "$LOG"
  mkdir -p "$OUT/$variant" && cp /tmp/exp$variant/model.onnx.part-* /tmp/exp$variant/meta.json "$OUT/$variant/"
done
python3 lab/encoder_speed.py --base .gpu/base --texts .gpu/train.jsonl.gz --n 20000 2>&1 | grep -v Loading | tee -a "$LOG"
