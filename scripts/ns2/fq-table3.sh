#!/bin/sh
# Ratios of the TCP flows' mean delivered packets under DropTail and RED to
# DRR's in ns-2 (fq-table3.tcl), seeds 1..N, 100 s runs, for both CBR random_
# settings. usage: [KNOBS=...] scripts/ns2/fq-table3.sh [N]
dir=$(dirname "$0"); n=${1:-4}
for r in 0 1; do
	for q in DRR DropTail RED; do
		for s in $(seq 1 "$n"); do
			ns "$dir/fq-table3.tcl" $q $r $s 100 | sed -n 's/^RESULT \([^ ]*\) random=\([01]\) seed=\([0-9]*\) dur=[^ ]* tcpmean=\([^ ]*\) .*/\1 \2 \3 \4/p'
		done
	done
done | awk '$1 == "DRR" { drr[$2 " " $3] = $4; next }
	{ k = $1 " random=" $2; sum[k] += $4 / drr[$2 " " $3]; cnt[k]++ }
	END { for (k in sum) printf "%s: TCP share relative to DRR %.4f (%d seeds)\n", k, sum[k] / cnt[k], cnt[k] }' | sort
