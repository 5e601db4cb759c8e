package eval

// fairQueueingReport is the fair-queueing study's report section
// (docs/studies/fair-queueing.md).
func fairQueueingReport(d *ReportData) (string, []table, []figure, error) {
	return "The fair-queueing study (Stoica, Shenker, Zhang, SIGCOMM 1998; docs/studies/fair-queueing.md)", nil, nil, nil
}
