package campaign

import (
	"fmt"
	"io"
	"time"

	"cclab/report/studies"
	"cclab/store"
)

// Path groups of the ETH analysis.
const (
	GroupIntra = "intra" // both hosts in one group (continent)
	GroupInter = "inter" // hosts in different groups
)

// PathGroup is "intra" when both hosts are in one group, else "inter".
func PathGroup(fromGroup, toGroup string) string {
	if fromGroup == toGroup {
		return GroupIntra
	}
	return GroupInter
}

// final is each planned transfer's outcome: its done attempt, or its last
// failed attempt when every allowed attempt failed; transfers still
// pending are left out.
func final(sp *Spec, rows []Row) []Row {
	bySeq := map[int]Row{}
	failed := map[int]int{}
	for _, r := range rows {
		if r.Digest != sp.Digest() {
			continue
		}
		if r.Status == StatusDone {
			bySeq[r.Seq] = r
			continue
		}
		failed[r.Seq]++
		if old, ok := bySeq[r.Seq]; !ok || (old.Status != StatusDone && r.Attempt > old.Attempt) {
			bySeq[r.Seq] = r
		}
	}
	var out []Row
	for _, it := range sp.Plan() {
		r, ok := bySeq[it.Seq]
		if ok && (r.Status == StatusDone || failed[it.Seq] >= 1+sp.Schedule.Retries) {
			out = append(out, r)
		}
	}
	return out
}

// ETHTransfer converts a stored transfer for the ETH analysis: the
// variant's name, the path group (PathGroup), the path "from->to", and the
// measurements; the loss rate is retransmitted over sent data packets (the
// sender's summary has no network loss count). An unreported count (-1) is
// 0.
func (r Row) ETHTransfer() studies.ETHTransfer {
	t := studies.ETHTransfer{Variant: r.Variant, Group: PathGroup(r.FromGroup, r.ToGroup), Path: r.From + "->" + r.To,
		Failed: r.Status != StatusDone}
	if t.Failed {
		return t
	}
	t.GoodputBps, t.DeliveredBytes = r.GoodputBps, r.Bytes
	t.PacketsSent, t.Retransmits, t.Unnecessary = max(r.PacketsSent, 0), r.Retransmits, max(r.Unnecessary, 0)
	t.RTOs, t.RTOCauses = r.RTOs, r.RTOCauses
	if t.PacketsSent > 0 {
		t.LossRate = min(float64(t.Retransmits)/float64(t.PacketsSent), 1)
	}
	return t
}

// ETHTransfers converts a campaign's finished transfers (done, or failed
// in every allowed attempt) for the ETH analysis, in plan order.
func ETHTransfers(sp *Spec, rows []Row) []studies.ETHTransfer {
	var out []studies.ETHTransfer
	for _, r := range final(sp, rows) {
		t := r.ETHTransfer()
		if _, ok := sp.Via[Pair{r.From, r.To}]; ok {
			t.Group += KindRelay // a relayed path is not pooled with the unshaped ones
		}
		out = append(out, t)
	}
	return out
}

// WriteReport writes the campaign's ETH analysis (studies.WriteETHReport) of
// its stored transfers, with the campaign, spec digest, database, period
// and the transfers' states as the report's header lines, then the
// per-path table and plots and, when cs is not empty, the replay against
// the measurement (StoredComparisons).
func WriteReport(w io.Writer, sp *Spec, db string, rows []Row, cs []Comparison) error {
	lines, err := Summarize(sp, rows)
	if err != nil {
		return err
	}
	c, causes := Totals(lines)
	var first, last time.Time
	for _, r := range rows {
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if r.Start.After(last) {
			last = r.Start
		}
	}
	period := "no transfers yet"
	if !first.IsZero() {
		period = first.UTC().Format(time.RFC3339) + " to " + last.UTC().Format(time.RFC3339)
	}
	meta := [][2]string{
		{"campaign", fmt.Sprintf("%s (spec digest %s)", sp.Name, sp.Digest())},
		{"database", store.DBName(db)},
		{"hosts", hostNames(sp.Hosts)},
		{"transfers", fmt.Sprintf("%d planned (%d rounds × %d pairs × %d variants): %d done, %d failed, %d pending",
			len(sp.Plan()), sp.Schedule.Rounds, len(sp.Pairs), len(sp.Variants), c.Done, c.Failed, c.Pending)},
		{"failed attempts", causeList(causes, "none")},
		{"period", period},
		{"path groups", "intra: both hosts in one group; inter: different groups (the spec's hosts[].group); +relay: the path crosses one of the spec's relays"},
	}
	tables, figs, err := pathSections(sp, rows, cs)
	if err != nil {
		return err
	}
	return studies.WriteETHReportWith(w, sp.Name, meta, ETHTransfers(sp, rows), tables, figs)
}
