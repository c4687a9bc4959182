# Sourced by the scripts that run simd on SimAI's ns-3 reference cases (ns3score, ns3chaos, ns3bunch,
# ns3draws, ns3drift, ns3rank0, ns3same, ns3spread):
# the reference set's layout, its fct files, one case's simd run, and the comparisons of a run with
# the case's (per layer and flow by flow). The caller sets `set -uo pipefail` and passes its
# REF_DIR argument (possibly empty) to ns3ref_init.

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

# spans NS3_FCT SIMD_FCT prints "err ns3_span simd_span" for a flow-file case, or a sentence and
# status 1.
spans() {
	local a b
	a=$(span "$1") b=$(span "$2")
	[ -n "$a" ] || { echo "ns-3 reference has no flows"; return 1; }
	[ -n "$b" ] || { echo "cannot read simd's flows"; return 1; }
	awk -v a="$a" -v b="$b" 'BEGIN { e = (b - a) / a; printf "%.4f %s %s\n", (e < 0 ? -e : e), a, b }'
}

# layers NS3_CSV SIMD_CSV NS3_FCT prints "err ns3_sum simd_sum", or a sentence and status 1.
layers() {
	{ catfct "$3" 2>/dev/null || true; } | awk -v ns3="$1" -v simd="$2" -v lim=0.05 '
	function isnum(s) { return s ~ /^[ \t]*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?[ \t]*$/ }
	function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
	# read FILE into arr: the fwd+wg+ig total comm of every layer row; returns the count.
	function read(file, arr,   n, line, r, m) {
		n = 0
		for (m = 1; (getline line < file) > 0; m++) {
			if (m <= 3) continue
			sub(/\r$/, "", line)
			if (split(line, r, ",") < 15 || trim(r[1]) == "SUM" || trim(r[1]) == "total exposed comm") continue
			if (!isnum(r[9]) || !isnum(r[12]) || !isnum(r[15])) continue
			arr[++n] = r[9] + r[12] + r[15]
		}
		close(file)
		return n
	}
	NF >= 8 { s = $6 + 0; e = $6 + $7; if (!nf || s < first) first = s; if (!nf || e > last) last = e; nf++ }
	END {
		na = read(ns3, a); nb = read(simd, b)
		if (na == 0) { print "ns-3 reference has no layer rows"; exit 1 }
		if (nb == 0 && (getline line < simd) <= 0) { print "cannot read simd output"; exit 1 }
		if (na != nb) { printf "layer rows: ns-3 %d, simd %d\n", na, nb; exit 1 }
		for (i = 1; i <= na; i++) {
			x = a[i]; y = b[i]
			e = x != 0 ? (x - y < 0 ? y - x : x - y) / x : (y < 0 ? -y : y)
			if (i == 1 || e > err) err = e
			sa += x; sb += y
		}
		if (err > lim && na == 1 && nf && last - first != 0) {
			span = (last - first) / 1000.0
			e = (span - b[1] < 0 ? b[1] - span : span - b[1]) / span
			if (e < err) err = e
		}
		printf "%.4f %.1f %.1f\n", err, sa, sb
	}'
}

# runlayers BASE_FCT BASE_CSV FCT CSV compares a run's fct.txt and EndToEnd.csv with a base run's
# of case $d: "err base other" as layers prints it, or, for a flow file or a base without a
# report (a workload whose report SimAI's ns-3 left empty), as spans prints it; a sentence and
# status 1 when they cannot be compared.
runlayers() {
	if [ -n "$(get flows)" ] || [ ! -s "$2" ]; then
		spans "$1" "$3"
	else
		layers "$2" "$4" "$1"
	fi
}

# caselayers FCT CSV is runlayers against case $d's stored ns-3 run.
caselayers() { runlayers "$d/fct.txt" "$d/ncclFlowModel_EndToEnd.csv" "$1" "$2"; }

# sortedflows FILE prints the flows of an fct.txt as "sip dip sport dport size<TAB>start<TAB>fct",
# sorted by key, start and FCT.
sortedflows() {
	catfct "$1" | awk 'NF >= 8 { print $1 " " $2 " " $3 " " $4 " " $5 "\t" $6 "\t" $7 }' |
		LC_ALL=C sort -t "$(printf '\t')" -k1,1 -k2,2n -k3,3n
}

# flows NS3_FCT SIMD_FCT prints "median/p99[(unmatched A/B)]", or "-".
flows() {
	sortedflows "$1" >"$work/a" 2>/dev/null && sortedflows "$2" >"$work/b" 2>/dev/null && [ -s "$work/a" ] || {
		echo -
		return
	}
	awk -F '\t' -v out="$work/errs" '
	FNR == NR { n[$1]++; f[$1, n[$1]] = $3; next }
	{
		m[$1]++
		if (m[$1] <= n[$1] && f[$1, m[$1]] > 0) { e = $3 / f[$1, m[$1]] - 1; printf "%.17g\n", (e < 0 ? -e : e) > out; c++ }
	}
	END {
		for (k in n) if (n[k] > m[k]) ua += n[k] - m[k]
		for (k in m) if (m[k] > n[k]) ub += m[k] - n[k]
		close(out)
		print c + 0, ua + 0, ub + 0
	}' "$work/a" "$work/b" >"$work/count" || { echo -; return; }
	local matched ua ub
	read -r matched ua ub <"$work/count"
	if [ "$matched" = 0 ]; then
		echo -
		return
	fi
	LC_ALL=C sort -g "$work/errs" | awk -v n="$matched" -v ua="$ua" -v ub="$ub" '
	{ e[NR - 1] = $1 }
	END {
		p = int(n * 0.99); if (p > n - 1) p = n - 1
		printf "%.3f/%.3f", e[int(n / 2)], e[p]
		if (ua != 0 || ub != 0) printf "(unmatched %d/%d)", ua, ub
		printf "\n"
	}'
	rm -f "$work/errs"
}
