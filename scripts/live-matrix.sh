#!/usr/bin/env bash
# live-matrix.sh: issue #5 live acceptance. Every congestion controller with
# every loss-recovery strategy sends a short transfer through cmd/bottleneck
# (a shaped, lossy path on loopback) to cmd/receiver; each must end
# "verified": true. Prints a table; exits non-zero on any failure.
#
# Usage: scripts/live-matrix.sh [-n BYTES] [-ccs "reno newreno ..."] [-recs "sack prr ..."]
# Environment: PORT (relay port, default 45300; the receiver uses PORT+1),
#              RELAY_ARGS (path, default the issue's 20 Mbit/s, 10 ms, 50-packet DropTail, 1% loss).
set -u
cd "$(dirname "$0")/.."
. scripts/lib.sh

BYTES=2MB
CCS="reno newreno dca vegas cubic"
RECS="reno newreno sack sack:lostretx fack fack:lostretx ratehalving ratehalving:lostretx prr prr:bound=crb prr:lostretx"
while [ $# -gt 0 ]; do
	case "$1" in
	-n) BYTES=$2; shift 2 ;;
	-ccs) CCS=$2; shift 2 ;;
	-recs) RECS=$2; shift 2 ;;
	*) echo "usage: $0 [-n BYTES] [-ccs LIST] [-recs LIST]" >&2; exit 2 ;;
	esac
done
PORT=${PORT:-45300}
RPORT=$((PORT + 1))
RELAY_ARGS=${RELAY_ARGS:-"-rate 20Mbit -delay 10ms -queue droptail:50p -loss 0.01 -rev-delay 10ms"}

live_build

"$BIN/receiver" -listen "127.0.0.1:$RPORT" -q >"$LOG/receiver.out" 2>&1 &
PIDS+=($!)
# shellcheck disable=SC2086
"$BIN/bottleneck" -listen "127.0.0.1:$PORT" -target "127.0.0.1:$RPORT" $RELAY_ARGS -quiet >"$LOG/relay.out" 2>&1 &
PIDS+=($!)
sleep 0.5
for p in "${PIDS[@]}"; do
	if ! kill -0 "$p" 2>/dev/null; then
		echo "a helper process exited at start:" >&2
		cat "$LOG"/*.out >&2
		exit 1
	fi
done

echo "path: $RELAY_ARGS; $BYTES per transfer" >&2
printf "%-10s %-22s %-8s %8s %7s %5s  %s\n" cc recovery verified Mbit/s retrans rtos "rto causes (burst/few/lostretx/other/handshake)"
fail=0
n=0
for cc in $CCS; do
	for rec in $RECS; do
		n=$((n + 1))
		out=$LOG/$n.json
		"$BIN/sender" -c "127.0.0.1:$PORT" -n "$BYTES" -cc "$cc" -recovery "$rec" -J -connect-timeout 5s >"$out" 2>"$LOG/$n.err"
		rc=$?
		if jq -e . "$out" >/dev/null 2>&1; then
			line=$(jq -r '.end.cclab | [(.verified|tostring), ((.throughput_bps/1e6*100|round)/100|tostring), (.retransmits|tostring), (.rtos|tostring),
				((.rto_causes.burst_loss // 0|tostring) + "/" + (.rto_causes.too_few_dupacks // 0|tostring) + "/" + (.rto_causes.lost_retransmission // 0|tostring) + "/" + (.rto_causes.other // 0|tostring) + "/" + (.rto_causes.handshake // 0|tostring))] | @tsv' "$out")
			IFS=$'\t' read -r ver mbps retx rtos causes <<<"$line"
		else
			ver=error mbps=- retx=- rtos=- causes=$(head -c 80 "$LOG/$n.err" | tr '\n' ' ')
		fi
		if [ "$rc" -ne 0 ] || [ "$ver" != true ]; then
			fail=$((fail + 1))
			[ "$ver" = true ] && ver="exit$rc"
		fi
		printf "%-10s %-22s %-8s %8s %7s %5s  %s\n" "$cc" "$rec" "$ver" "$mbps" "$retx" "$rtos" "$causes"
	done
done
echo "$((n - fail))/$n transfers verified" >&2
[ "$fail" -eq 0 ]
