package perf

import (
	"time"

	"cclab/transport"
	"cclab/transport/udp"
)

// capTick is how often a rate-capped sender writes: every tick it writes
// what the cap allows since the start, so the average never exceeds it and
// bursts are at most a tick's worth (iperf3 checks its average the same
// way, iperf_check_throttle, on every write).
const capTick = time.Millisecond

// capChunk bounds one write, bytes.
const capChunk = 64 << 10

// capWrites writes the pattern stream into conn at no more than
// cfg.RateCap bits/s on average since t0 (iperf3's -b for TCP: the
// application's writes are limited; the controller still governs what
// the network sees), until cfg.Bytes or cfg.Duration, then closes the
// sending direction. It gives up when a write fails or stop closes.
func capWrites(conn *udp.Conn, src *transport.PatternSource, cfg *ClientConfig, t0 time.Time, stop <-chan struct{}) {
	defer conn.CloseWrite()
	tick := time.NewTicker(capTick)
	defer tick.Stop()
	buf := make([]byte, capChunk)
	var off int64
	for {
		elapsed := time.Since(t0)
		if cfg.Bytes == 0 && elapsed >= cfg.Duration {
			return
		}
		allowed := int64(cfg.RateCap * elapsed.Seconds() / 8)
		if cfg.Bytes > 0 {
			allowed = min(allowed, cfg.Bytes)
		}
		for off < allowed {
			n := min(allowed-off, capChunk)
			src.Fill(off, buf[:n])
			if _, err := conn.Write(buf[:n]); err != nil {
				return
			}
			off += n
		}
		if cfg.Bytes > 0 && off >= cfg.Bytes {
			return
		}
		select {
		case <-tick.C:
		case <-stop:
			return
		}
	}
}
