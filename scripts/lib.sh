# lib.sh: setup shared by the live acceptance scripts (live-matrix.sh,
# live-ccid2.sh). Source it from the repository root.

# PIDS holds the background processes (receiver, relays) to stop on exit.
PIDS=()

# live_build builds sender, receiver and bottleneck into a fresh temporary
# directory BIN, creates LOG=$BIN/logs, and arranges for live_cleanup to run
# on exit.
live_build() {
	BIN=$(mktemp -d)
	LOG=$BIN/logs
	mkdir -p "$LOG"
	trap live_cleanup EXIT
	echo "building sender, receiver, bottleneck ..." >&2
	go build -ldflags "$(scripts/ldflags.sh)" -o "$BIN/" ./cmd/sender ./cmd/receiver ./cmd/bottleneck || exit 1
}

# live_cleanup stops every process in PIDS and removes BIN.
live_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$BIN"
}
