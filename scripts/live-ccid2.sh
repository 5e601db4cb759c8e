#!/usr/bin/env bash
# live-ccid2.sh: issue #6 live acceptance. Datagram-mode flows through
# cmd/bottleneck on loopback (20 Mbit/s, 10 ms each way, 50-packet DropTail):
#   1. CCID2 at an application rate of RATE without random loss (reference);
#   2. CCID2 at RATE with LOSS random loss: its sending rate must fall
#      (below 80% of the reference);
#   3. uncontrolled UDP (-cc none) at RATE with LOSS random loss: its sending
#      rate must stay at RATE (within 5%).
# For every run the receiver's "lost in the network" must match the relay's
# drop count of the forward path (within 2 datagrams or 1%: a lost Initial
# or CLOSE is dropped by the relay but is not a data sequence gap).
# Each run has its own relay so the drop count is that flow's. Prints a
# table; exits non-zero on a failed check.
#
# Usage: scripts/live-ccid2.sh [-t SECONDS] [-rate RATE] [-loss P]
# Environment: PORT (relay port, default 45400; the receiver uses PORT+1).
set -u
cd "$(dirname "$0")/.."
. scripts/lib.sh

SECS=10
RATE=10Mbit
LOSS=0.02
while [ $# -gt 0 ]; do
	case "$1" in
	-t) SECS=$2; shift 2 ;;
	-rate) RATE=$2; shift 2 ;;
	-loss) LOSS=$2; shift 2 ;;
	*) echo "usage: $0 [-t SECONDS] [-rate RATE] [-loss P]" >&2; exit 2 ;;
	esac
done
PORT=${PORT:-45400}
RPORT=$((PORT + 1))
PATH_ARGS="-rate 20Mbit -delay 10ms -queue droptail:50p -rev-delay 10ms"

live_build

"$BIN/receiver" -listen "127.0.0.1:$RPORT" -q -J >"$LOG/receiver.jsonl" 2>"$LOG/receiver.err" &
PIDS[0]=$! # PIDS[1] is the current run's relay
sleep 0.3

# run NAME LOSS SENDER-ARGS...: one flow through a fresh relay; prints
# "send_Mbps recv_Mbps lost_network relay_drops queue_dropped owd_ms jitter_ms max_ack_ratio".
run() {
	local name=$1 loss=$2
	shift 2
	# shellcheck disable=SC2086
	"$BIN/bottleneck" -listen "127.0.0.1:$PORT" -target "127.0.0.1:$RPORT" $PATH_ARGS -loss "$loss" \
		-stats "$LOG/$name.stats" -interval 1s -quiet >"$LOG/$name.relay.out" 2>&1 &
	PIDS[1]=$!
	sleep 0.3
	# -size 1200: the acceptance is defined in 1,200-byte datagrams (the
	# 50-packet queue, the drop counts); without it the sender would
	# discover the relay's 9,216-byte limit (docs/dccp.md).
	"$BIN/sender" -c "127.0.0.1:$PORT" -mode datagram -size 1200 -t "$SECS" -J "$@" >"$LOG/$name.json" 2>"$LOG/$name.err"
	local rc=$?
	sleep 0.5 # let the last ACKs and the close cross the relay
	kill "${PIDS[1]}" 2>/dev/null
	wait "${PIDS[1]}" 2>/dev/null
	unset 'PIDS[1]'
	if [ "$rc" -ne 0 ] || ! jq -e .end.cclab.receiver "$LOG/$name.json" >/dev/null 2>&1; then
		echo "$name: sender failed (rc $rc):" >&2
		cat "$LOG/$name.err" "$LOG/$name.json" >&2
		echo "error"
		return
	fi
	local drops
	drops=$(jq -s '[.[].hops[] | select(.dir=="fwd") | .drops | to_entries[] | .value] | add // 0' "$LOG/$name.stats")
	jq -r --argjson drops "$drops" '.end.cclab | [(.send_rate_bps/1e6*100|round/100), (.receiver.throughput_bps/1e6*100|round/100),
		.receiver.lost_network, $drops, .queue_dropped, (.receiver.owd_ms*100|round/100), (.receiver.jitter_ms*1000|round/1000),
		([.ack_ratio[].ratio] | max // 0)] | @tsv' "$LOG/$name.json"
}

fail=0
printf "%-14s %-5s %9s %9s %8s %8s %9s %8s %8s %6s\n" flow loss send_Mbps recv_Mbps lost_net relay_dr queue_drp owd_ms jitt_ms max_R
declare -A SEND
for spec in "ccid2-clean|0|-cc ccid2 -rate $RATE" "ccid2-lossy|$LOSS|-cc ccid2 -rate $RATE" "udp-lossy|$LOSS|-cc none -rate $RATE"; do
	IFS='|' read -r name loss args <<<"$spec"
	# shellcheck disable=SC2086
	line=$(run "$name" "$loss" $args)
	if [ "$line" = error ]; then
		fail=$((fail + 1))
		continue
	fi
	IFS=$'\t' read -r send recv lost drops qd owd jit maxr <<<"$line"
	printf "%-14s %-5s %9s %9s %8s %8s %9s %8s %8s %6s\n" "$name" "$loss" "$send" "$recv" "$lost" "$drops" "$qd" "$owd" "$jit" "$maxr"
	SEND[$name]=$send
	tol=$(awk -v d="$drops" 'BEGIN { t = d / 100; if (t < 2) t = 2; print t }')
	if ! awk -v a="$lost" -v b="$drops" -v t="$tol" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
		echo "FAIL $name: receiver lost $lost, relay dropped $drops" >&2
		fail=$((fail + 1))
	fi
done
nominal=$(awk -v r="$RATE" 'BEGIN { u = r; sub(/[0-9.]+/, "", u); v = r + 0; m = 1; if (u ~ /^[Gg]/) m = 1000; else if (u ~ /^[Kk]/) m = 0.001; print v * m }')
if [ -n "${SEND[ccid2-clean]:-}" ] && [ -n "${SEND[ccid2-lossy]:-}" ]; then
	if awk -v a="${SEND[ccid2-lossy]}" -v b="${SEND[ccid2-clean]}" 'BEGIN { exit !(a < 0.8 * b) }'; then
		echo "ok: CCID2 backs off under $LOSS loss: ${SEND[ccid2-lossy]} vs ${SEND[ccid2-clean]} Mbit/s without loss" >&2
	else
		echo "FAIL: CCID2 sent ${SEND[ccid2-lossy]} Mbit/s with loss, ${SEND[ccid2-clean]} without: no back-off" >&2
		fail=$((fail + 1))
	fi
fi
if [ -n "${SEND[udp-lossy]:-}" ]; then
	if awk -v a="${SEND[udp-lossy]}" -v n="$nominal" 'BEGIN { exit !(a > 0.95 * n && a < 1.05 * n) }'; then
		echo "ok: uncontrolled UDP keeps its rate under $LOSS loss: ${SEND[udp-lossy]} Mbit/s (nominal $nominal)" >&2
	else
		echo "FAIL: uncontrolled UDP sent ${SEND[udp-lossy]} Mbit/s, nominal $nominal" >&2
		fail=$((fail + 1))
	fi
fi
[ "$fail" -eq 0 ] && echo "all checks passed" >&2
exit "$fail"
