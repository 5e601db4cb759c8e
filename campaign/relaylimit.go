package campaign

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"cclab/relay"
	"cclab/store"
)

// The relays' host-limited intervals (docs/campaigns.md, "Relays whose
// host could not keep up"): a relay's statistics lines carry, per
// direction and interval, the packets the kernel dropped before the relay
// read them and the writes its host made late (relay.HostLine); a
// transfer whose route crossed a link while its relay was host-limited
// measured the emulation, not the network, and validate keeps it out as
// it keeps out transfers whose own hosts were limited.

// RelayInterval is one stored interval of a relay's direction: the link
// of the spec's routes it emulates (Spec.Route: "relay NAME", "up HOST",
// "down HOST", "groups A>B"), its span and its evidence.
type RelayInterval struct {
	Link       string
	Start, End time.Time
	Host       relay.HostLine
}

// RelayLinks names the links a relay's two directions emulate (for a
// campaign relay both are "relay NAME"; an access link's are "up HOST"
// and "down HOST").
type RelayLinks struct{ Fwd, Rev string }

// DecodeRelayStats reads a relay's statistics lines (bottleneck -stats,
// relay.StatsLine: JSON lines) and returns the intervals of their host
// blocks under the links' names; the one decoder of relay statistics
// for campaigns. Lines without a host block (an older relay) are skipped
// and counted.
func DecodeRelayStats(r io.Reader, links RelayLinks) (out []RelayInterval, skipped int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var line relay.StatsLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, 0, fmt.Errorf("line %d: %w", n, err)
		}
		if len(line.Host) == 0 {
			skipped++
			continue
		}
		for _, h := range line.Host {
			link := links.Fwd
			if h.Dir == "rev" {
				link = links.Rev
			}
			if link == "" {
				continue
			}
			out = append(out, RelayInterval{Link: link, Start: h.Start().UTC(), End: h.End().UTC(), Host: h})
		}
	}
	return out, skipped, sc.Err()
}

// RouteLinks returns every link of the spec's routes (Spec.Route over its
// pairs, both ways): the names relay intervals can be stored under.
func (s *Spec) RouteLinks() []string {
	var out []string
	for _, p := range s.Pairs {
		for _, q := range []Pair{p, {p.To, p.From}} {
			for _, l := range s.Route(q) {
				if !slices.Contains(out, l) {
					out = append(out, l)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// relayLimits returns the reasons a transfer's relays were host-limited
// while it ran, as "relay CODE" ("relay late", "relay rx_queue_drops"),
// each code once: the intervals on a link of its data's route or its
// ACKs' (Spec.Route of the reversed pair) that intersect
// [Start, Start + Seconds]. ivs are sorted by Start.
func relayLimits(sp *Spec, r Row, ivs []RelayInterval) []string {
	if len(ivs) == 0 || r.Start.IsZero() {
		return nil
	}
	p := Pair{r.From, r.To}
	route := append(sp.Route(p), sp.Route(Pair{p.To, p.From})...)
	end := transferEnd(r)
	var out []string
	for _, iv := range ivs {
		if !iv.Start.Before(end) {
			break
		}
		if !iv.End.After(r.Start) || !slices.Contains(route, iv.Link) {
			continue
		}
		for _, c := range iv.Host.Reasons() {
			if w := "relay " + c; !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// sortIntervals sorts relay intervals by start.
func sortIntervals(ivs []RelayInterval) {
	slices.SortStableFunc(ivs, func(a, b RelayInterval) int { return a.Start.Compare(b.Start) })
}

// SaveRelayIntervals stores a campaign's relay intervals; an interval
// stored already (the same campaign, link, direction and end) is kept.
func (s *Store) SaveRelayIntervals(ctx context.Context, campaign string, ivs []RelayInterval) (added int, err error) {
	q := `INSERT INTO campaign_relay_intervals (campaign, link, dir, start_ns, end_ns, writes, late, rx_queue_drops) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (campaign, link, dir, end_ns) DO NOTHING`
	err = s.SQL.InTx(ctx, false, func(tx store.SQLTx) error {
		for _, iv := range ivs {
			res, err := tx.Exec(ctx, q, campaign, iv.Link, iv.Host.Dir, iv.Start.UnixNano(), iv.End.UnixNano(), iv.Host.Writes, iv.Host.Late, iv.Host.RxQueueDrops)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			added += int(n)
		}
		return nil
	})
	return added, err
}

// RelayIntervals returns a campaign's stored relay intervals by start.
func (s *Store) RelayIntervals(ctx context.Context, campaign string) ([]RelayInterval, error) {
	rows, err := s.SQL.SQL().Query(ctx, `SELECT link, dir, start_ns, end_ns, writes, late, rx_queue_drops FROM campaign_relay_intervals
		WHERE campaign = ? ORDER BY start_ns, link, dir`, campaign)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RelayInterval
	for rows.Next() {
		var iv RelayInterval
		var start, end int64
		if err := rows.Scan(&iv.Link, &iv.Host.Dir, &start, &end, &iv.Host.Writes, &iv.Host.Late, &iv.Host.RxQueueDrops); err != nil {
			return nil, err
		}
		iv.Start, iv.End = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
		iv.Host.Wall, iv.Host.Span = end, end-start
		out = append(out, iv)
	}
	return out, rows.Err()
}

// MarkRelayLimits sets each row's RelayLimits from the campaign's relay
// intervals (relayLimits); ivs need not be sorted.
func MarkRelayLimits(sp *Spec, rows []Row, ivs []RelayInterval) {
	ivs = slices.Clone(ivs)
	sortIntervals(ivs)
	for i := range rows {
		rows[i].RelayLimits = relayLimits(sp, rows[i], ivs)
	}
}

// Transfers returns the spec's campaign's stored attempts of its digest
// (Rows) with their relays' host-limited marks (RelayIntervals,
// MarkRelayLimits).
func (s *Store) Transfers(ctx context.Context, sp *Spec) ([]Row, error) {
	rows, err := s.Rows(ctx, sp.Name, sp.Digest())
	if err != nil {
		return nil, err
	}
	ivs, err := s.RelayIntervals(ctx, sp.Name)
	if err != nil {
		return nil, err
	}
	MarkRelayLimits(sp, rows, ivs)
	return rows, nil
}
