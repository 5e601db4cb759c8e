#!/usr/bin/env bash
# live-relay-flows.sh: issue #29's "thousands of flows live". N concurrent
# stream flows (default 1,000) through one cmd/bottleneck relay to one
# receiver on loopback: sender processes of up to 63 flows each (-P),
# BYTES per flow, the relay at RATE with 10 ms each way and a 1000-packet
# DropTail queue, the receiver's per-source limits raised for the relay's
# one address (docs/receiver.md). Prints how many flows the receiver
# verified, the senders' failures, the relay's forward drops and its
# clients, and the receiver's and relay's CPU seconds and peak RSS; exits
# non-zero unless the senders report all N flows verified (each sender's
# flow line carries the receiver's verdict). It also prints the receiver's
# side of any failure: its flows that ended with an error and its admission
# counters (evictions, refusals, stateless cookies).
#
# Usage: scripts/live-relay-flows.sh [-n FLOWS] [-bytes BYTES] [-rate RATE]
# Environment: PORT (relay port, default 45500; the receiver uses PORT+1),
# RECEIVER_ARGS (more receiver flags, e.g. "-evict-idle 1m").
set -u
cd "$(dirname "$0")/.."
. scripts/lib.sh

N=1000
BYTES=200KB
RATE=200Mbit
while [ $# -gt 0 ]; do
	case "$1" in
	-n) N=$2; shift 2 ;;
	-bytes) BYTES=$2; shift 2 ;;
	-rate) RATE=$2; shift 2 ;;
	*) echo "usage: $0 [-n FLOWS] [-bytes BYTES] [-rate RATE]" >&2; exit 2 ;;
	esac
done
PORT=${PORT:-45500}
RPORT=$((PORT + 1))
LIM=$((N * 2))

live_build

"$BIN/receiver" -listen "127.0.0.1:$RPORT" -max-conns-per-source "$LIM" -max-conns-per-prefix "$LIM" \
	-max-conns "$((LIM > 4096 ? LIM : 4096))" -max-half-open-per-source 256 -max-half-open-per-prefix 256 \
	${RECEIVER_ARGS:-} >"$LOG/receiver.out" 2>&1 &
PIDS[0]=$!
"$BIN/bottleneck" -listen "127.0.0.1:$PORT" -target "127.0.0.1:$RPORT" -rate "$RATE" -delay 10ms -rev-delay 10ms \
	-queue droptail:1000p -max-clients "$LIM" -max-clients-per-host "$LIM" -stats "$LOG/relay.jsonl" -interval 1s \
	>"$LOG/relay.out" 2>&1 &
PIDS[1]=$!
sleep 0.5
echo "load before: $(uptime)"
senders=()
left=$N
i=0
while [ "$left" -gt 0 ]; do
	p=$((left < 63 ? left : 63))
	"$BIN/sender" -c "127.0.0.1:$PORT" -P "$p" -n "$BYTES" -i 0 -connect-timeout 60s >"$LOG/sender$i.out" 2>&1 &
	senders+=($!)
	left=$((left - p))
	i=$((i + 1))
done
failed=0
for p in "${senders[@]}"; do wait "$p" || failed=$((failed + 1)); done
echo "load after: $(uptime)"
ticks=$(getconf CLK_TCK)
for p in "${PIDS[0]}" "${PIDS[1]}"; do
	echo "$(cat /proc/"$p"/comm): CPU $(awk -v t="$ticks" '{printf "%.2f s", ($14+$15)/t}' /proc/"$p"/stat), peak RSS $(awk '/VmHWM/ {print $2, $3}' /proc/"$p"/status)"
done
# The receiver prints a flow's line when its closing handshake ends, which
# can be long after the data when the relay's queue dropped a CLOSE: stop
# it (it ends and prints every flow) before counting its lines.
kill "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null
verified=$(grep -c 'verify=pattern' "$LOG/receiver.out")
sent=$(cat "$LOG"/sender*.out | grep -v SUM | grep -c 'verified=true')
echo "sender processes: ${#senders[@]}, failed: $failed; flow failures reported by the senders: $(cat "$LOG"/sender*.out | grep -c 'failed\|no answer')"
grep -h 'failed\|no answer' "$LOG"/sender*.out | sed 's/^sender: //; s/^flow [0-9]*: //' | sort | uniq -c
# The receiver's side of any failure: its flows that ended with an error
# (by message) and its admission counters (evictions, refusals, cookies).
grep -h 'error:' "$LOG/receiver.out" | sed 's/.*error: //' | sort | uniq -c | sed 's/^/receiver flow errors: /'
grep -h 'receiver admission' "$LOG/receiver.out" | tail -1 | sed 's/^\[[0-9a-f]*\] //'
jq -s '.[-1].counters | "relay: clients \(.clients), forward received \(.received[0]) sent \(.sent[0]) (the rest dropped by the queue or oversize \(.oversize))"' -r "$LOG/relay.jsonl"
echo "flows verified: $sent of $N by the senders' lines (the receiver's verdict), $verified of $N by the receiver's own lines"
[ "$sent" -eq "$N" ]
