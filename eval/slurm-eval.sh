#!/usr/bin/env bash
# A Slurm job array for `cdiff eval run`: each array task runs one shard of
# the instances (every N-th from I), resumable; when all are done, merge the
# shards and print the tables:
#
#   sbatch --array=0-7 eval/slurm-eval.sh mri-cpp starcoder2-7b results/mri
#   # after the array finished:
#   cdiff eval merge results/mri/shard-*.jsonl --out results/mri/all.jsonl
#   cdiff eval report results/mri/all.jsonl --plots results/mri/plots
#
# Arguments: TASK MODEL OUT_DIR [more `eval run` flags...]; the number of
# shards is the array's size; MODES and SEEDS (environment) override the
# paper's four modes and four seeds, CDIFF the binary. A task that is requeued or rerun resumes its
# own shard file (--resume skips the records already written).
#SBATCH --job-name=cdiff-eval
#SBATCH --output=cdiff-eval-%A_%a.log
#SBATCH --gpus=1
#SBATCH --cpus-per-task=8
#SBATCH --mem=64G
#SBATCH --time=24:00:00
set -euo pipefail
task=${1:?usage: sbatch --array=0-N eval/slurm-eval.sh TASK MODEL OUT_DIR [flags]}
model=${2:?model}
out=${3:?output directory}
shift 3
i=${SLURM_ARRAY_TASK_ID:?run under sbatch --array}
n=${SLURM_ARRAY_TASK_COUNT:?run under sbatch --array}
mkdir -p "$out"
exec "${CDIFF:-cdiff}" eval run --task "$task" --model "$model" \
  --modes "${MODES:-vanilla,con-minus,con,gp}" --seeds "${SEEDS:-0..3}" \
  --shard "$i/$n" --resume --out "$out/shard-$i.jsonl" "$@"
