#!/usr/bin/env bash
# oneDNN's own ISA choice vs the AVX2 cap, per network (each case in a fresh process).
cd "$(dirname "$0")/.." && source scripts/setup_venv.sh requirements.txt
for net in lenet5 mlp; do
  for isa in "" AVX2; do
    ONEDNN_MAX_CPU_ISA=$isa GLOG_v=3 python bench/step_time.py $net cell graph
  done
done
