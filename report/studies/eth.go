package studies

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cclab/metrics"
	"cclab/report"
	"cclab/scenario"
	"cclab/store"
)

// The ETH bulk-transfer analysis (docs/studies/eth-bulk.md), after the ETH
// Zürich measurements (Bolliger, Hengartner & Gross,
// "The effectiveness of end-to-end congestion control mechanisms", ETH TR 313,
// 1999): bulk transfers with Reno, NewReno, SACK, FACK, Rate-Halving and
// Vegas between hosts of two continents, compared by goodput, retransmissions
// (and the unnecessary ones) and the causes of their timeouts. The same
// analysis serves a live campaign (cclab campaign report) and the emulated
// experiment eth-bulk (its report section, StudyETH).

// ETHTransfer is one bulk transfer as the ETH analysis sees it (live campaign row or emulated run).
type ETHTransfer struct {
	Variant        string           // e.g. "reno", "sack", "ratehalving+lostretx" (ETHVariant)
	Group          string           // path group: "intra" or "inter" (continent), or the emulated profile's group
	Path           string           // "src->dst" or the emulated profile's name
	Failed         bool             // the transfer did not complete (excluded from goodput, counted)
	GoodputBps     float64          // bits/s
	DeliveredBytes int64            // bytes delivered in order to the receiver
	PacketsSent    int64            // data packets including retransmissions
	Retransmits    int64            // retransmitted data packets
	Unnecessary    int64            // retransmissions found unnecessary (spurious: timestamps/DSACK)
	RTOs           int64            // retransmission timeouts
	RTOCauses      map[string]int64 // burst_loss, too_few_dupacks (non-trigger), lost_retransmission, other, spurious (other names count as other)
	LossRate       float64          // network loss rate of the flow's packets, 0..1 (retransmits/packets when nothing better)
}

// RTO causes of ETHTransfer.RTOCauses (transport.ClassifyRTO; docs/metrics.md).
const (
	// ETHCauseBurstLoss: two or more segments of a window large enough for
	// fast retransmit were missing (the ETH study's "burst loss").
	ETHCauseBurstLoss = "burst_loss"
	// ETHCauseTooFewDupAcks: fewer segments were outstanding than the
	// duplicate-ACK threshold, so recovery could not be triggered (the ETH
	// study's "non-trigger of fast recovery").
	ETHCauseTooFewDupAcks = "too_few_dupacks"
	// ETHCauseLostRetransmission: the oldest outstanding segment had already
	// been retransmitted (its retransmission was lost).
	ETHCauseLostRetransmission = "lost_retransmission"
	// ETHCauseOther: none of the three patterns (also the handshake's).
	ETHCauseOther = "other"
	// ETHCauseSpurious: a timeout found unnecessary afterwards (moved here
	// from the cause it was first counted under).
	ETHCauseSpurious = "spurious"
)

// ethCause maps an RTO cause name (transport.RTOCause's String, as the
// metrics and the sender's summary spell it) to the analysis' causes: the
// four of ETHCauses but other keep their names; "unknown"
// (transport.RTOOther), "handshake" and any other name are "other".
func ethCause(name string) string {
	switch name {
	case ETHCauseBurstLoss, ETHCauseTooFewDupAcks, ETHCauseLostRetransmission, ETHCauseSpurious:
		return name
	}
	return ETHCauseOther
}

// ETHCauses lists the RTO causes in the order of the report's columns.
var ETHCauses = []string{ETHCauseBurstLoss, ETHCauseTooFewDupAcks, ETHCauseLostRetransmission, ETHCauseOther, ETHCauseSpurious}

// ETHVariants are the ETH study's variants in the report's order; a
// variant outside the list comes after them, in first-seen order.
var ETHVariants = []string{"reno", "newreno", "sack", "fack", "ratehalving", "ratehalving+lostretx", "vegas"}

// ethSACKVariants are the variants with SACK-based loss recovery on the Reno
// controller: the "SACK variants" the study compares with Reno.
var ethSACKVariants = []string{"sack", "fack", "ratehalving", "ratehalving+lostretx"}

// ethReno is the baseline of the comparisons.
const ethReno = "reno"

// ETHVariant names a controller and recovery spec as the ETH study names the
// variant: a Vegas controller is "vegas" (whatever its recovery); on a Reno
// controller the recovery names it ("reno", "newreno", "sack", "fack",
// "ratehalving"), with "+lostretx" for the lost-retransmission option
// ("ratehalving:lostretx" is "ratehalving+lostretx") and its period
// parameter (ETHPeriodParams) left out of the name ("sack:nolt" is "sack",
// "ratehalving:lostretx,draft" is "ratehalving+lostretx"); any other pair,
// and a Reno controller with the default recovery (""), is "cc/recovery".
func ETHVariant(cc, recovery string) string {
	ccName, _, _ := strings.Cut(strings.TrimSpace(cc), ":")
	rec := strings.TrimSpace(recovery)
	switch {
	case ccName == "vegas":
		return "vegas"
	case ccName != "reno" || rec == "":
		return cc + "/" + recovery
	}
	name, params, _ := strings.Cut(rec, ":")
	suffix := ""
	for _, p := range strings.Split(params, ",") {
		switch p {
		case "", ETHPeriodParams[name]:
		case "lostretx":
			suffix = "+lostretx"
		default:
			return cc + "/" + recovery
		}
	}
	return name + suffix
}

// ETHPeriodParams is, per recovery, the parameter that gives it the
// behaviour of the study's 1990s senders (docs/studies/eth-bulk.md): no
// Limited Transmit (RFC 3042, 2001) for reno, newreno, sack and fack, the
// draft's adjustment interval for ratehalving. ETHVariant names a recovery
// with it as the recovery without it.
var ETHPeriodParams = map[string]string{"reno": "nolt", "newreno": "nolt", "sack": "nolt", "fack": "nolt", "ratehalving": "draft"}

// ethLossBin is a range [Lo, Hi) of a transfer's loss rate.
type ethLossBin struct {
	Lo, Hi float64
	Name   string
}

// ethLossBins are the report's loss-rate bins: the ETH study's split at 10 %,
// with the range below it split at 1 % and 5 %.
var ethLossBins = []ethLossBin{{0, 0.01, "< 1 %"}, {0.01, 0.05, "1–5 %"}, {0.05, 0.10, "5–10 %"}, {0.10, math.Inf(1), "≥ 10 %"}}

// ethPerMB scales retransmissions per delivered byte to per 10⁶ bytes.
const ethPerMB = 1e6

// ethStats is the analysis of one cell (variant and path group) of transfers.
type ethStats struct {
	Variant, Group string
	Transfers      int             // transfers in the cell
	Failed         int             // of which failed
	Goodput        metrics.Summary // completed transfers' goodput, bits/s
	Q1, Q3         float64         // quartiles of the completed transfers' goodput
	// RetxPerMB: per transfer that delivered data, retransmitted packets per
	// 10⁶ delivered bytes; RetxPerMBPooled = 10⁶·ΣRetransmits/ΣDeliveredBytes.
	RetxPerMB       metrics.Summary
	RetxPerMBPooled float64
	// Unnecessary: per transfer that retransmitted, the unnecessary share of
	// its retransmissions; UnnecessaryPooled = ΣUnnecessary/ΣRetransmits.
	Unnecessary       metrics.Summary
	UnnecessaryPooled float64
	RTOs              metrics.Summary            // timeouts per transfer that sent data
	Causes            map[string]metrics.Summary // per cause, timeouts per transfer that sent data
	LossRate          metrics.Summary            // per transfer that sent data
}

// sent reports whether a transfer sent or delivered any data (the transfers
// whose retransmissions and timeouts say something; a transfer that failed
// before its first packet only counts as failed).
func (t *ETHTransfer) sent() bool { return t.PacketsSent > 0 || t.DeliveredBytes > 0 }

// ethAnalyze computes the statistics of one cell. Goodput is over the
// completed transfers; retransmissions, timeouts and loss over every
// transfer that sent data, completed or not (a transfer that failed midway
// still shows how its variant recovered).
func ethAnalyze(variant, group string, ts []ETHTransfer) ethStats {
	s := ethStats{Variant: variant, Group: group, Transfers: len(ts), Causes: map[string]metrics.Summary{}}
	var good, retx, unn, rtos, loss []float64
	causes := map[string][]float64{}
	var sumRetx, sumBytes, sumUnn, sumRetxAll float64
	for i := range ts {
		t := &ts[i]
		if t.Failed {
			s.Failed++
		} else {
			good = append(good, t.GoodputBps)
		}
		if !t.sent() {
			continue
		}
		if t.DeliveredBytes > 0 {
			retx = append(retx, ethPerMB*float64(t.Retransmits)/float64(t.DeliveredBytes))
			sumRetx += float64(t.Retransmits)
			sumBytes += float64(t.DeliveredBytes)
		}
		if t.Retransmits > 0 {
			unn = append(unn, float64(t.Unnecessary)/float64(t.Retransmits))
			sumUnn += float64(t.Unnecessary)
			sumRetxAll += float64(t.Retransmits)
		}
		rtos = append(rtos, float64(t.RTOs))
		byCause := map[string]int64{}
		for c, n := range t.RTOCauses {
			byCause[ethCause(c)] += n
		}
		for _, c := range ETHCauses {
			causes[c] = append(causes[c], float64(byCause[c]))
		}
		loss = append(loss, t.LossRate)
	}
	s.Goodput = metrics.SummarizeIn(good, metrics.NonNegative)
	s.Q1, s.Q3 = Quantile(good, 0.25), Quantile(good, 0.75)
	s.RetxPerMB = metrics.SummarizeIn(retx, metrics.NonNegative)
	s.RetxPerMBPooled, s.UnnecessaryPooled = math.NaN(), math.NaN()
	if sumBytes > 0 {
		s.RetxPerMBPooled = ethPerMB * sumRetx / sumBytes
	}
	if sumRetxAll > 0 {
		s.UnnecessaryPooled = sumUnn / sumRetxAll
	}
	s.Unnecessary = metrics.SummarizeIn(unn, metrics.Fraction)
	s.RTOs = metrics.SummarizeIn(rtos, metrics.NonNegative)
	for _, c := range ETHCauses {
		s.Causes[c] = metrics.SummarizeIn(causes[c], metrics.NonNegative)
	}
	s.LossRate = metrics.SummarizeIn(loss, metrics.Fraction)
	return s
}

// Quantile is the q-quantile of xs by linear interpolation between order
// statistics (Hyndman & Fan 1996, definition 7: R's and NumPy's default):
// h = (n−1)q, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]) of the sorted values.
// NaN for no values; xs is not modified.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	h := float64(len(s)-1) * q
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// ethOrder returns the variants and groups present in ts, variants in
// ETHVariants order, groups "intra" then "inter" then the rest, each
// remaining one in first-seen order.
func ethOrder(ts []ETHTransfer) (variants, groups []string) {
	seenV, seenG := map[string]bool{}, map[string]bool{}
	for _, t := range ts {
		seenV[t.Variant], seenG[t.Group] = true, true
	}
	for _, v := range ETHVariants {
		if seenV[v] {
			variants = append(variants, v)
		}
	}
	for _, g := range []string{"intra", "inter"} {
		if seenG[g] {
			groups = append(groups, g)
		}
	}
	for _, t := range ts {
		if !slices.Contains(variants, t.Variant) {
			variants = append(variants, t.Variant)
		}
		if !slices.Contains(groups, t.Group) {
			groups = append(groups, t.Group)
		}
	}
	return variants, groups
}

// ethSelect returns the transfers of a variant (all with "") and a group.
func ethSelect(ts []ETHTransfer, variants []string, group string) []ETHTransfer {
	var out []ETHTransfer
	for _, t := range ts {
		if t.Group == group && (variants == nil || slices.Contains(variants, t.Variant)) {
			out = append(out, t)
		}
	}
	return out
}

// ethGoodputs returns the completed transfers' goodputs.
func ethGoodputs(ts []ETHTransfer) []float64 {
	var out []float64
	for _, t := range ts {
		if !t.Failed {
			out = append(out, t.GoodputBps)
		}
	}
	return out
}

// ethNonTrigger returns, per transfer that sent data, its non-trigger
// (too_few_dupacks) timeouts.
func ethNonTrigger(ts []ETHTransfer) []float64 {
	var out []float64
	for i := range ts {
		if ts[i].sent() {
			out = append(out, float64(ts[i].RTOCauses[ETHCauseTooFewDupAcks]))
		}
	}
	return out
}

// ethVerdict classifies a Welch comparison of b against a: +1 when the 95 %
// interval of the difference lies above 0, −1 below, 0 when it contains 0,
// and ok false when there are too few values for an interval.
func ethVerdict(w metrics.WelchDiff) (sign int, ok bool) {
	if math.IsNaN(w.Half) {
		return 0, false
	}
	switch {
	case w.Diff-w.Half > 0:
		return 1, true
	case w.Diff+w.Half < 0:
		return -1, true
	}
	return 0, true
}

// ethDiffCell formats a difference with its 95 % interval.
func ethDiffCell(unit string, w metrics.WelchDiff) string {
	if math.IsNaN(w.Diff) {
		return "–"
	}
	if math.IsNaN(w.Half) {
		return report.FormatSigned(unit, w.Diff)
	}
	return fmt.Sprintf("%s [%s, %s]", report.FormatSigned(unit, w.Diff), report.FormatSigned(unit, w.Diff-w.Half), report.FormatSigned(unit, w.Diff+w.Half))
}

// ethComparison is one Welch comparison of the report.
type ethComparison struct {
	Group, A, B string // B compared against A
	W           metrics.WelchDiff
}

// ethSACKComparisons compares the goodput of each SACK variant (and of the
// SACK variants pooled) with Reno's, per group.
func ethSACKComparisons(ts []ETHTransfer) []ethComparison {
	variants, groups := ethOrder(ts)
	var out []ethComparison
	for _, g := range groups {
		renoAll := ethSelect(ts, []string{ethReno}, g)
		if len(renoAll) == 0 {
			continue
		}
		reno := ethGoodputs(renoAll) // none when every Reno transfer failed: "too few transfers"
		var present []string
		for _, v := range ethSACKVariants {
			if slices.Contains(variants, v) && len(ethSelect(ts, []string{v}, g)) > 0 {
				present = append(present, v)
				out = append(out, ethComparison{g, ethReno, v, metrics.Welch(reno, ethGoodputs(ethSelect(ts, []string{v}, g)))})
			}
		}
		if len(present) > 1 {
			out = append(out, ethComparison{g, ethReno, "SACK variants pooled (" + strings.Join(present, ", ") + ")",
				metrics.Welch(reno, ethGoodputs(ethSelect(ts, present, g)))})
		}
	}
	return out
}

// ethRateHalvingComparisons compares the non-trigger timeouts per transfer
// of each Rate-Halving variant with every other variant, per group.
func ethRateHalvingComparisons(ts []ETHTransfer) []ethComparison {
	variants, groups := ethOrder(ts)
	var out []ethComparison
	for _, g := range groups {
		for _, rh := range variants {
			if !strings.HasPrefix(rh, "ratehalving") {
				continue
			}
			b := ethNonTrigger(ethSelect(ts, []string{rh}, g))
			if len(b) == 0 {
				continue
			}
			for _, v := range variants {
				if strings.HasPrefix(v, "ratehalving") {
					continue
				}
				if a := ethNonTrigger(ethSelect(ts, []string{v}, g)); len(a) > 0 {
					out = append(out, ethComparison{g, v, rh, metrics.Welch(a, b)})
				}
			}
		}
	}
	return out
}

// ethAnswers states the study's two questions' answers, computed from the
// comparisons: per group, which SACK variants beat Reno (goodput) and how
// Rate-Halving's non-trigger timeouts compare with the other variants'.
func ethAnswers(ts []ETHTransfer) [][2]string {
	var out [][2]string
	_, groups := ethOrder(ts)
	sack, rh := ethSACKComparisons(ts), ethRateHalvingComparisons(ts)
	for _, g := range groups {
		var better, worse, same, few []string
		for _, c := range sack {
			if c.Group != g {
				continue
			}
			sign, ok := ethVerdict(c.W)
			desc := fmt.Sprintf("%s (%s Mbit/s, 95 %% CI [%s, %s])", c.B, signedNum(c.W.Diff/1e6), signedNum((c.W.Diff-c.W.Half)/1e6),
				signedNum((c.W.Diff+c.W.Half)/1e6))
			switch {
			case !ok:
				few = append(few, c.B)
			case sign > 0:
				better = append(better, desc)
			case sign < 0:
				worse = append(worse, desc)
			default:
				same = append(same, desc)
			}
		}
		if len(better)+len(worse)+len(same)+len(few) > 0 {
			out = append(out, [2]string{"Do SACK variants beat Reno (goodput)? — " + g, ethSentence(
				"Higher goodput than Reno", better, "lower goodput than Reno", worse,
				"no difference distinguishable at 95 %", same, "too few transfers to compare", few)})
		}
		better, worse, same, few = nil, nil, nil, nil
		for _, c := range rh {
			if c.Group != g {
				continue
			}
			sign, ok := ethVerdict(c.W)
			desc := fmt.Sprintf("%s than %s (%.3f vs %.3f per transfer, difference 95 %% CI [%s, %s])", c.B, c.A, c.W.MeanB, c.W.MeanA,
				signedNum(c.W.Diff-c.W.Half), signedNum(c.W.Diff+c.W.Half))
			switch {
			case !ok:
				few = append(few, c.B+" vs "+c.A)
			case sign < 0:
				better = append(better, desc)
			case sign > 0:
				worse = append(worse, desc)
			case c.W.MeanA == 0 && c.W.MeanB == 0:
				same = append(same, c.B+" and "+c.A+" (none in either)")
			default:
				same = append(same, strings.Replace(desc, " than ", " and ", 1))
			}
		}
		if len(better)+len(worse)+len(same)+len(few) > 0 {
			out = append(out, [2]string{"Does Rate-Halving have fewer non-trigger (too_few_dupacks) timeouts? — " + g, ethSentence(
				"Fewer", better, "more", worse, "no difference distinguishable at 95 %", same, "too few transfers to compare", few)})
		}
	}
	return out
}

// ethSentence joins labelled lists into one sentence, skipping empty ones.
func ethSentence(parts ...any) string {
	var out []string
	for i := 0; i+1 < len(parts); i += 2 {
		label, items := parts[i].(string), parts[i+1].([]string)
		if len(items) > 0 {
			out = append(out, label+": "+strings.Join(items, "; "))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	s := strings.Join(out, ". ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

// signedNum formats a number with its sign and three significant digits.
func signedNum(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%+.3g", v)
}

// ethCaption is the method note shared by the ETH tables.
const ethCaption = " Cells: mean ± half-width of the 95 % confidence interval over the transfers (Student's t), or [low, high]† where " +
	"the t interval would leave the quantity's range (percentile bootstrap)."

// ethTables returns the ETH analysis of ts as the report's tables, the
// answers to the study's questions first; suffix is appended to each title
// (e.g. the backend).
func ethTables(ts []ETHTransfer, suffix string) []report.Table {
	variants, groups := ethOrder(ts)
	var cells []ethStats
	for _, g := range groups {
		for _, v := range variants {
			if sel := ethSelect(ts, []string{v}, g); len(sel) > 0 {
				cells = append(cells, ethAnalyze(v, g, sel))
			}
		}
	}
	if len(cells) == 0 {
		return nil
	}
	var out []report.Table
	ans := report.Table{Title: "The study's questions, answered from the numbers" + suffix,
		Caption: "Computed from the tables below, never written by hand. SACK variants against Reno: the difference of the mean goodputs " +
			"of completed transfers (variant − Reno) with its 95 % Welch interval (unequal variances, Welch–Satterthwaite degrees of " +
			"freedom); a variant beats Reno when the whole interval lies above 0. Rate-Halving: the same comparison of the non-trigger " +
			"(too_few_dupacks) timeouts per transfer with every other variant.",
		Head: []string{"question — path group", "answer"}}
	for _, a := range ethAnswers(ts) {
		ans.Rows = append(ans.Rows, []string{a[0], a[1]})
	}
	if len(ans.Rows) > 0 {
		out = append(out, ans)
	}
	gp := report.Table{Title: "Goodput per variant and path group" + suffix,
		Caption: "Goodput of each completed transfer (bytes delivered ×8 / transfer time); failed transfers (not completed) are counted " +
			"and left out. Median and quartiles: linear interpolation between order statistics." + ethCaption,
		Head: []string{"group", "variant", "transfers", "failed", "goodput", "median", "quartiles"}}
	rt := report.Table{Title: "Retransmissions and the unnecessary share" + suffix,
		Caption: "Per transfer that delivered data: retransmitted packets per 10⁶ delivered bytes; pooled: Σ retransmissions / Σ bytes. " +
			"Unnecessary share: per transfer that retransmitted, the retransmissions found unnecessary (the original had arrived: " +
			"timestamps, RFC 3522, or D-SACK) over its retransmissions; pooled: Σ unnecessary / Σ retransmissions. Loss rate: the " +
			"network's drops of the transfer's packets / packets sent." + ethCaption,
		Head: []string{"group", "variant", "transfers", "retransmissions per MB", "pooled", "unnecessary share", "pooled", "loss rate"}}
	to := report.Table{Title: "Timeouts per transfer by cause" + suffix,
		Caption: "Retransmission timeouts per transfer that sent data, split by the cause the sender classified at expiry " +
			"(transport.ClassifyRTO; docs/metrics.md): burst loss (two or more segments of a large enough window missing), non-trigger " +
			"of fast recovery (too_few_dupacks: fewer segments outstanding than the duplicate-ACK threshold), lost retransmission, " +
			"other; spurious: timeouts found unnecessary afterwards (moved from their first cause)." + ethCaption,
		Head: []string{"group", "variant", "transfers", "all timeouts", "burst loss", "non-trigger", "lost retransmission", "other", "spurious"}}
	for _, c := range cells {
		gp.Rows = append(gp.Rows, []string{c.Group, c.Variant, strconv.Itoa(c.Transfers), strconv.Itoa(c.Failed),
			report.SummaryCell("bit/s", c.Goodput), report.FormatValue("bit/s", c.Goodput.Median),
			report.FormatValue("bit/s", c.Q1) + " – " + report.FormatValue("bit/s", c.Q3)})
		rt.Rows = append(rt.Rows, []string{c.Group, c.Variant, strconv.Itoa(c.Transfers), report.SummaryCell("1", c.RetxPerMB),
			fnum("%.4g", c.RetxPerMBPooled), report.SummaryCell("1", c.Unnecessary), fnum("%.4f", c.UnnecessaryPooled), report.SummaryCell("1", c.LossRate)})
		row := []string{c.Group, c.Variant, strconv.Itoa(c.Transfers), report.SummaryCell("1", c.RTOs)}
		for _, cause := range ETHCauses {
			row = append(row, report.SummaryCell("1", c.Causes[cause]))
		}
		to.Rows = append(to.Rows, row)
	}
	out = append(out, gp, rt, to)
	lb := report.Table{Title: "Loss-rate bins" + suffix,
		Caption: "The transfers of each group that sent data, by their loss rate (the ETH study's split at 10 %, the range below split at 1 % " +
			"and 5 %): " +
			"goodput of the completed ones, timeouts and non-trigger timeouts per transfer that sent data." + ethCaption,
		Head: []string{"group", "loss rate", "variant", "transfers", "failed", "goodput", "timeouts", "non-trigger timeouts"}}
	for _, g := range groups {
		for _, b := range ethLossBins {
			for _, v := range variants {
				var sel []ETHTransfer
				for _, t := range ethSelect(ts, []string{v}, g) {
					if t.sent() && t.LossRate >= b.Lo && t.LossRate < b.Hi {
						sel = append(sel, t)
					}
				}
				if len(sel) == 0 {
					continue
				}
				c := ethAnalyze(v, g, sel)
				lb.Rows = append(lb.Rows, []string{g, b.Name, v, strconv.Itoa(c.Transfers), strconv.Itoa(c.Failed),
					report.SummaryCell("bit/s", c.Goodput), report.SummaryCell("1", c.RTOs), report.SummaryCell("1", c.Causes[ETHCauseTooFewDupAcks])})
			}
		}
	}
	out = append(out, lb)
	cmp := func(title, caption, unit, measure string, cs []ethComparison, better int) {
		t := report.Table{Title: title + suffix, Caption: caption,
			Head: []string{"group", "variant", "against", "n", "n (against)", measure, measure + " (against)", "difference [95 % CI]", "verdict"}}
		for _, c := range cs {
			verdict := "too few transfers"
			if sign, ok := ethVerdict(c.W); ok {
				verdict = map[int]string{better: "better", -better: "worse", 0: "not distinguishable"}[sign]
			}
			t.Rows = append(t.Rows, []string{c.Group, c.B, c.A, strconv.Itoa(c.W.NB), strconv.Itoa(c.W.NA), report.FormatValue(unit, c.W.MeanB),
				report.FormatValue(unit, c.W.MeanA), ethDiffCell(unit, c.W), verdict})
		}
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}
	cmp("Goodput: SACK variants against Reno", "Mean goodput of completed transfers, the variant against Reno on the same path group; "+
		"difference (variant − Reno) with its 95 % Welch interval. Better: the interval lies above 0.", "bit/s", "goodput",
		ethSACKComparisons(ts), 1)
	cmp("Non-trigger timeouts: Rate-Halving against the other variants", "Mean non-trigger (too_few_dupacks) timeouts per transfer, "+
		"the Rate-Halving variant against each other variant on the same path group; difference (Rate-Halving − other) with its 95 % "+
		"Welch interval. Better: fewer (the interval lies below 0).", "1", "non-trigger timeouts", ethRateHalvingComparisons(ts), -1)
	return out
}

// WriteETHReport writes a standalone HTML report of the ETH analysis (the tables the emulated experiment's
// report shows, with 95% CIs): per variant and per group goodput distribution, retransmissions per delivered
// byte and the unnecessary share, timeouts per transfer by cause, loss-rate bins (<10% and above).
// meta lists key/value lines shown under the title (e.g. the campaign, its spec digest, the period).
func WriteETHReport(w io.Writer, title string, meta [][2]string, ts []ETHTransfer) error {
	return WriteETHReportWith(w, title, meta, ts, nil, nil)
}

// WriteETHReportWith is WriteETHReport with further tables and figures
// after the analysis (the campaign report's per-path tables and plots).
func WriteETHReportWith(w io.Writer, title string, meta [][2]string, ts []ETHTransfer, tables []report.Table, figures []report.Figure) error {
	page := struct {
		Title   string
		Meta    [][2]string
		N       int
		Failed  int
		Tables  []report.Table
		Extra   []report.Table
		Figures []report.Figure
	}{Title: title, Meta: meta, N: len(ts), Tables: ethTables(ts, ""), Extra: tables, Figures: figures}
	for _, t := range ts {
		if t.Failed {
			page.Failed++
		}
	}
	return ethTemplate.Execute(w, page)
}

// ethTemplate is WriteETHReport's page; its style and table markup are the
// report's (reportTemplate's "style" and "table").
var ethTemplate = template.Must(template.Must(report.ReportTemplate.Clone()).New("eth").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>cclab ETH analysis: {{.Title}}</title>
{{template "style"}}
</head>
<body>
<h1>cclab ETH analysis: {{.Title}}</h1>
<p class="meta">{{.N}} transfers{{if .Failed}}, {{.Failed}} failed{{end}}. The analysis of the ETH bulk-transfer study (docs/studies/eth-bulk.md).</p>
{{if .Meta}}<table><tbody>{{range .Meta}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</tbody></table>{{end}}
{{range .Tables}}<h2>{{.Title}}</h2>
{{template "table" .}}
{{else}}<p>No transfers.</p>{{end}}
{{range .Extra}}<h2>{{.Title}}</h2>
{{template "table" .}}
{{end}}{{range .Figures}}<h2>{{.Title}}</h2>
<figure>{{if .Panels}}<div class="grid">{{range .Panels}}<div>{{.}}</div>{{end}}</div>{{else}}{{.SVG}}{{end}}
<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</body>
</html>`))

// ETHRunTransfers converts the measured stream flows of a stored run to
// ETHTransfers (the eth-bulk experiment's conversion; docs/studies/eth-bulk.md):
// the variant from the flow's controller and recovery (ETHVariant of its
// Info), the path its topology (the point's topology axis, "" without one)
// and the group the path's name up to its first "-" ("intra-eu" is in group
// "intra"). A flow that did not deliver all its bytes (no fct) failed.
func ETHRunTransfers(r *store.RunRecord, topology string) []ETHTransfer {
	group, _, _ := strings.Cut(topology, "-")
	var out []ETHTransfer
	for _, f := range r.Flows {
		fields := map[string]string{}
		for _, kv := range strings.Fields(f.Info) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				fields[k] = v
			}
		}
		if fields["mode"] != scenario.ModeStream {
			continue
		}
		val := func(m string) float64 {
			v, _ := r.Value(metrics.ScopeFlow, f.ID, m)
			if math.IsNaN(v) {
				return 0
			}
			return v
		}
		_, done := r.Value(metrics.ScopeFlow, f.ID, "fct")
		t := ETHTransfer{Variant: ETHVariant(fields["cc"], fields["recovery"]), Group: group, Path: topology, Failed: !done,
			GoodputBps: val("mean_throughput"), DeliveredBytes: int64(val("total_delivered")), PacketsSent: int64(val("total_packets_sent")),
			Retransmits: int64(val("total_retransmissions")), Unnecessary: int64(val("total_spurious_retransmissions")),
			RTOs: int64(val("total_rtos")), RTOCauses: map[string]int64{}}
		for _, s := range r.Summaries {
			cause, ok := strings.CutPrefix(s.Metric, "total_rtos_")
			if s.Scope != metrics.ScopeFlow || s.ScopeID != f.ID || !ok {
				continue
			}
			t.RTOCauses[ethCause(cause)] += int64(s.Value)
		}
		if lr, ok := r.Value(metrics.ScopeFlow, f.ID, "loss_rate"); ok {
			t.LossRate = lr
		} else if t.PacketsSent > 0 {
			t.LossRate = float64(t.Retransmits) / float64(t.PacketsSent)
		}
		out = append(out, t)
	}
	return out
}

// ETHLiveCasePrefix starts the names of the eth-bulk experiment's cases that
// run live (with their simulator twins): their transfers (a smaller size, the
// live paths) are analysed apart from the main cases'.
const ETHLiveCasePrefix = "live"

// ethReport is the eth-bulk study's report section (StudySections): the ETH
// analysis of the main cases' transfers, then of the live cases' (cases
// named ETHLiveCasePrefix…), each per backend.
func ethReport(d *report.ReportData) (string, []report.Table, []report.Figure, error) {
	var tables []report.Table
	for _, live := range []bool{false, true} {
		for _, be := range d.Backends {
			var ts []ETHTransfer
			for _, g := range d.Groups {
				if g.Backend != be || strings.HasPrefix(g.Param(scenario.CaseAxis), ETHLiveCasePrefix) != live {
					continue
				}
				for i := range g.Runs {
					ts = append(ts, ETHRunTransfers(&g.Runs[i], g.Param("topology"))...)
				}
			}
			suffix := " (" + report.BackendName(be) + ")"
			if live {
				suffix = " (live case, " + report.BackendName(be) + ")"
			}
			tables = append(tables, ethTables(ts, suffix)...)
		}
	}
	return "The ETH bulk-transfer study, emulated (docs/studies/eth-bulk.md)", tables, nil, nil
}
