# Sourced by bench/run, bench/compare and bench/pgo: the MoE slice of their moe40 rows.

# moe40 FILE [GA] writes the first 40 layers of SimAI's workload_analytical.txt (its layers 4 to
# 43, after the embedding) to FILE as a workload of its own: the header as it is, or with its ga
# set to GA. Run from the project root.
moe40() {
	local ex=configs/examples/workload_analytical.txt
	{
		if [ -n "${2:-}" ]; then
			head -1 "$ex" | sed "s/ ga: [0-9]* / ga: $2 /"
		else
			head -1 "$ex"
		fi
		echo 40
		awk 'NR >= 6 && NR <= 45' "$ex"
	} >"$1"
}
