package ccalgo_test

import (
	"fmt"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/internal/spec"
)

// Build a controller from a spec and feed it one ACK.
func ExampleNew() {
	cc, err := ccalgo.New("dca:x=6,w=20,reduction=0.25,decision=rtt", ccalgo.Env{MSS: 1200})
	if err != nil {
		panic(err)
	}
	fmt.Println(cc.Name(), cc.Cwnd(), cc.State().Phase)
	cc.OnAck(ccalgo.Ack{Now: clock.Start, Acked: 2400, AckedPackets: 2, RTT: 50 * time.Millisecond,
		CumAck: 2400, SndNxt: 12000})
	fmt.Println(cc.Cwnd())
	// Output:
	// dca 12000 slow_start
	// 14400
}

// List a controller's parameters and defaults (for -help output).
func ExampleRegistry() {
	e, _ := ccalgo.Registry.Lookup("vegas")
	for _, p := range spec.Params(e.Defaults()) {
		fmt.Printf("%s=%s\n", p.Key, p.Default)
	}
	_, err := ccalgo.New("vegas:delta=1", ccalgo.Env{MSS: 1200})
	fmt.Println(err)
	// Output:
	// iw=0
	// abc=2
	// ssthresh=0
	// alpha=2
	// beta=4
	// gamma=1
	// rtt=mean
	// finegrained=false
	// ns3=false
	// ns3rtt=false
	// ns3open=false
	// vegas: unknown parameter "delta" (allowed: abc, alpha, beta, finegrained, gamma, iw, ns3, ns3open, ns3rtt, rtt, ssthresh)
}
