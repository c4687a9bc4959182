#!/usr/bin/env bash
# Runs configs/sweep/spec.yaml as a Slurm job array: one task per shard. Slurm sets
# SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT in every task; simd sweep reads them as the
# shard index and count, so the command needs no glue. Submit with
#   sbatch configs/sweep/slurm-array.sh
# then merge the shards: simd sweep merge sweep-out -o table.csv
#SBATCH --job-name=simd-sweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --output=simd-sweep-%a.log
set -euo pipefail
simd sweep configs/sweep/spec.yaml -o sweep-out
