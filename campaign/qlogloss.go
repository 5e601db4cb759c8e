package campaign

import (
	"bytes"
	"encoding/json"

	"cclab/internal/qlog"
)

// lossSequence reads a sender's qlog (JSON-SEQ, internal/qlog) and returns
// its data packets in the order sent, true for each one declared lost: a
// recovery:packet_lost event marks the latest transmission of its segment
// (packet_number is the segment's stream offset) before the event.
// Records that are not JSON objects, or events without a packet number,
// are counted in bad and skipped.
func lossSequence(trace []byte) (lost []bool, bad int) {
	latest := map[uint64]int{} // segment → index of its latest transmission
	for _, rec := range bytes.Split(trace, []byte{qlog.RecordSeparator}) {
		rec = bytes.TrimSpace(rec)
		if len(rec) == 0 {
			continue
		}
		var ev struct {
			Name string `json:"name"`
			Data struct {
				Header struct {
					PacketNumber *uint64 `json:"packet_number"`
				} `json:"header"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec, &ev); err != nil {
			bad++
			continue
		}
		pn := ev.Data.Header.PacketNumber
		switch ev.Name {
		case "transport:packet_sent":
			if pn == nil {
				bad++
				continue
			}
			latest[*pn] = len(lost)
			lost = append(lost, false)
		case "recovery:packet_lost":
			if pn == nil {
				bad++
				continue
			}
			if i, ok := latest[*pn]; ok {
				lost[i] = true
			}
		}
	}
	return lost, bad
}
