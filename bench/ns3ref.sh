# Sourced by the scripts that run simd on SimAI's ns-3 reference cases (ns3score, ns3bunch, ns3draws,
# ns3spread):
# the reference set's layout, its fct files, and one case's simd run. The caller sets
# `set -uo pipefail` and passes its REF_DIR argument (possibly empty) to ns3ref_init.

# ns3ref_init REF_DIR: from the project root (where it leaves the shell), sets ref (REF_DIR made
# absolute, or the tree's own cases, cmd/simd/testdata/ns3ref), runs (ref/runs when the set has
# that layout, else ref), work (a temporary directory removed on exit) and simd (built there);
# exits 2 when REF_DIR is not a directory or simd does not build.
ns3ref_init() {
	ref=$1
	if [ -n "$ref" ]; then
		ref=$(cd "$ref" && pwd) || exit 2
	fi
	cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
	[ -n "$ref" ] || ref=$(pwd)/cmd/simd/testdata/ns3ref
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	go build -o "$work/simd" ./cmd/simd || exit 2
	simd=$work/simd
	runs=$ref
	[ -d "$ref/runs" ] && runs=$ref/runs
}

# catfct FILE prints FILE, or FILE.gz decompressed; fails when neither exists.
catfct() {
	if [ -f "$1" ]; then
		cat "$1"
	elif [ -f "$1.gz" ]; then
		gzip -dc "$1.gz"
	else
		return 1
	fi
}

# span FCT prints the last finish - first start of an fct.txt's flows (FCT or FCT.gz) in µs, or
# nothing.
span() {
	{ catfct "$1" 2>/dev/null || true; } | awk 'NF >= 8 { s = $6 + 0; e = $6 + $7; if (!n || s < first) first = s; if (!n || e > last) last = e; n++ }
	END { if (n) printf "%.1f\n", (last - first) / 1000.0 }'
}

# get KEY prints the value of a line of case directory $d's case.txt.
get() { sed -n "s/^$1 //p" "$d/case.txt" | head -n 1; }

# ns3ref_case reads case directory $d: sets c (its name), w, fl, n, envs (case.txt's workload,
# flows, topology and env) and input (simd's -w or -flows arguments).
ns3ref_case() {
	c=$(basename "$d")
	w=$(get workload) fl=$(get flows) n=$(get topology) envs=$(get env)
	input=(-w "$ref/workloads/$w")
	[ -n "$fl" ] && input=(-flows "$ref/flows/$fl")
}

# ns3ref_simd OUT [ARGS...] runs simd on the case ns3ref_case read, with the case's SimAI.conf
# and environment (and none of the caller's AS_* variables) and ARGS, writing into OUT and
# OUT/log.
ns3ref_simd() {
	local out=$1
	shift
	# shellcheck disable=SC2086 # one NAME=VALUE per word
	env -u AS_SEND_LAT -u AS_NVLS_ENABLE -u AS_PXN_ENABLE $envs "$simd" "${input[@]}" -n "$ref/topo/$n" \
		-c "$d/SimAI.conf" "$@" -o "$out" -quiet >"$out/log" 2>&1
}

# ns3ref_args "$@" splits a script's arguments: the first two before "--" are REF_DIR and
# CASE_GLOB (set as refarg and glob, glob defaulting to *), those after it the simd arguments
# of every run (set as simdargs).
ns3ref_args() {
	local pos=()
	simdargs=()
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then
			shift
			simdargs=("$@")
			break
		fi
		pos+=("$1")
		shift
	done
	refarg=${pos[0]:-} glob=${pos[1]:-*}
}
