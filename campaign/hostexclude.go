package campaign

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The host-limited marks of a measured transfer: the sender's and the
// receiver's host_limit blocks (docs/metrics.md, "Host-limited runs"), which
// cclab campaign validate keeps out of the comparison with the replay (a
// network replay cannot contain a host's stalls) unless asked.

// hostLimitBlock is the part of a host_limit block validate reads.
type hostLimitBlock struct {
	Limited bool `json:"host_limited"`
	Reasons []struct {
		Code string `json:"code"`
	} `json:"reasons"`
}

// senderEnd is the part of a sender's JSON report (its end block) that
// the profile and validate read: the segment size at its end, whether it
// was authenticated, and its host_limit block. One decoder for all of
// them (decodeSenderEnd).
type senderEnd struct {
	MSS  int             `json:"mss"`
	Auth json.RawMessage `json:"auth"`
	Host *hostLimitBlock `json:"host_limit"`
}

// decodeSenderEnd decodes a sender's JSON report's end block; ok is
// false when the JSON is malformed.
func decodeSenderEnd(senderJSON string) (end senderEnd, ok bool) {
	var snd struct {
		End senderEnd `json:"end"`
	}
	if json.Unmarshal([]byte(senderJSON), &snd) != nil {
		return senderEnd{}, false
	}
	return snd.End, true
}

// hostLimited reports whether a sender's JSON report marks it
// host-limited (its end.host_limit, docs/metrics.md "Host-limited runs").
func hostLimited(senderJSON string) bool {
	end, _ := decodeSenderEnd(senderJSON)
	return end.Host != nil && end.Host.Limited
}

// transferHostLimits returns the reasons a transfer was host-limited, as
// "role code" ("sender cpu_busy", "receiver timer_late"; a mark without
// reasons: "role host_limited"; a relay on its route: "relay late",
// Row.RelayLimits), none when nothing marked it. The sender's block is
// its end.host_limit, the receiver's its host_limit.
func transferHostLimits(r Row) []string {
	var rcv struct {
		Host *hostLimitBlock `json:"host_limit"`
	}
	var out []string
	add := func(role string, h *hostLimitBlock) {
		if h == nil || !h.Limited {
			return
		}
		if len(h.Reasons) == 0 {
			out = append(out, role+" host_limited")
		}
		for _, x := range h.Reasons {
			out = append(out, role+" "+x.Code)
		}
	}
	if end, ok := decodeSenderEnd(r.SenderJSON); ok {
		add("sender", end.Host)
	}
	if json.Unmarshal([]byte(r.ReceiverJSON), &rcv) == nil {
		add("receiver", rcv.Host)
	}
	return append(out, r.RelayLimits...)
}

// exclusionText is the reasons counted, most frequent first ("sender
// cpu_busy 2, receiver timer_late 1"), "" for none.
func exclusionText(reasons map[string]int) string {
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if reasons[a] != reasons[b] {
			return reasons[b] - reasons[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, reasons[k])
	}
	return strings.Join(parts, ", ")
}
