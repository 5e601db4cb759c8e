package sim

import (
	"fmt"
	"time"

	"cclab/link"
)

// DefaultAccessQueue is the queue of access links: large, so that the
// bottleneck, not the access, is where packets wait and drop.
const DefaultAccessQueue = "droptail:100000p"

// DumbbellConfig describes a dumbbell: Flows sender hosts s0.. behind router
// "left", Flows receiver hosts r0.. behind router "right", one bottleneck
// each way between the routers.
type DumbbellConfig struct {
	Flows        int             // sender/receiver host pairs
	Rate         float64         // bottleneck rate, bits/s
	Delay        time.Duration   // bottleneck one-way propagation delay
	Queue        string          // bottleneck queue spec (qdisc), e.g. "droptail:50p"
	ReverseRate  float64         // reverse bottleneck rate, bits/s; 0 = Rate; negative = unlimited
	ReverseQueue string          // reverse bottleneck queue; "" = Queue
	AccessDelays []time.Duration // one-way delay of each sender's access link: one value for all, or one per flow
	AccessRate   float64         // access link rate, bits/s; 0 = unlimited
	AccessQueue  string          // access link queue; "" = DefaultAccessQueue
	MTU          int             // link MTU, bytes; 0 = link.DefaultMTU
}

// AccessDelay returns flow i's sender access delay.
func (c DumbbellConfig) AccessDelay(i int) time.Duration {
	switch len(c.AccessDelays) {
	case 0:
		return 0
	case 1:
		return c.AccessDelays[0]
	}
	return c.AccessDelays[i]
}

// BaseRTT returns flow i's round-trip propagation delay.
func (c DumbbellConfig) BaseRTT(i int) time.Duration { return 2 * (c.AccessDelay(i) + c.Delay) }

// Description returns the dumbbell as a general topology description.
func (c DumbbellConfig) Description() (Description, error) {
	if c.Flows < 1 {
		return Description{}, fmt.Errorf("dumbbell: flows must be at least 1")
	}
	if n := len(c.AccessDelays); n > 1 && n != c.Flows {
		return Description{}, fmt.Errorf("dumbbell: %d access delays for %d flows (give one or one per flow)", n, c.Flows)
	}
	rq := c.ReverseQueue
	if rq == "" {
		rq = c.Queue
	}
	rr := c.ReverseRate
	switch {
	case rr == 0:
		rr = c.Rate
	case rr < 0:
		rr = 0 // unlimited
	}
	aq := c.AccessQueue
	if aq == "" {
		aq = DefaultAccessQueue
	}
	var d Description
	left, right := d.AddNode("left", Router), d.AddNode("right", Router)
	d.AddDuplex(left, right,
		link.Config{Rate: c.Rate, Delay: c.Delay, Queue: c.Queue, MTU: c.MTU},
		link.Config{Rate: rr, Delay: c.Delay, Queue: rq, MTU: c.MTU})
	for i := range c.Flows {
		s := d.AddNode(fmt.Sprintf("s%d", i), Host)
		r := d.AddNode(fmt.Sprintf("r%d", i), Host)
		acc := link.Config{Rate: c.AccessRate, Delay: c.AccessDelay(i), Queue: aq, MTU: c.MTU}
		d.AddDuplex(s, left, acc, acc)
		d.AddDuplex(right, r, link.Config{Rate: c.AccessRate, Queue: aq, MTU: c.MTU}, link.Config{Rate: c.AccessRate, Queue: aq, MTU: c.MTU})
	}
	return d, nil
}

// Dumbbell is a built dumbbell.
type Dumbbell struct {
	Net                *Network
	Config             DumbbellConfig
	Senders, Receivers []*Node
	Left, Right        *Node
	Forward, Reverse   *Link // the bottleneck, left→right and right→left
}

// NewDumbbell builds a dumbbell on e.
func NewDumbbell(e *Engine, c DumbbellConfig, opt Options) (*Dumbbell, error) {
	d, err := c.Description()
	if err != nil {
		return nil, err
	}
	n, err := Build(e, d, opt)
	if err != nil {
		return nil, err
	}
	db := &Dumbbell{Net: n, Config: c, Left: n.Node("left"), Right: n.Node("right"),
		Forward: n.LinkByName("left>right"), Reverse: n.LinkByName("right>left")}
	for i := range c.Flows {
		db.Senders = append(db.Senders, n.Node(fmt.Sprintf("s%d", i)))
		db.Receivers = append(db.Receivers, n.Node(fmt.Sprintf("r%d", i)))
	}
	return db, nil
}

// ChainConfig describes a parking lot: routers q0..qK in a line with K
// bottleneck hops qi→qi+1 (and reverse links), Flows end-to-end host pairs
// (m_s<i> at q0 to m_r<i> at qK) crossing every hop, and at each hop i Cross
// host pairs (c<i>_s<j> at qi to c<i>_r<j> at qi+1) whose traffic enters and
// leaves with that hop.
type ChainConfig struct {
	Hops        int           // bottleneck hops in series (K)
	Rate        float64       // each hop's rate, bits/s
	Delay       time.Duration // each hop's one-way propagation delay
	Queue       string        // each hop's queue spec
	Flows       int           // end-to-end (measured) flows
	Cross       int           // cross-traffic host pairs per hop
	AccessDelay time.Duration // one-way delay of every sender access link
	AccessRate  float64       // access link rate, bits/s; 0 = unlimited
	AccessQueue string        // "" = DefaultAccessQueue
	MTU         int           // bytes; 0 = link.DefaultMTU
}

// Description returns the chain as a general topology description.
func (c ChainConfig) Description() (Description, error) {
	if c.Hops < 1 {
		return Description{}, fmt.Errorf("chain: hops must be at least 1")
	}
	aq := c.AccessQueue
	if aq == "" {
		aq = DefaultAccessQueue
	}
	acc := link.Config{Rate: c.AccessRate, Delay: c.AccessDelay, Queue: aq, MTU: c.MTU}
	rcv := link.Config{Rate: c.AccessRate, Queue: aq, MTU: c.MTU}
	hop := link.Config{Rate: c.Rate, Delay: c.Delay, Queue: c.Queue, MTU: c.MTU}
	var d Description
	for i := 0; i <= c.Hops; i++ {
		d.AddNode(fmt.Sprintf("q%d", i), Router)
	}
	for i := 0; i < c.Hops; i++ {
		d.AddDuplex(fmt.Sprintf("q%d", i), fmt.Sprintf("q%d", i+1), hop, hop)
	}
	for j := 0; j < c.Flows; j++ {
		s := d.AddNode(fmt.Sprintf("m_s%d", j), Host)
		r := d.AddNode(fmt.Sprintf("m_r%d", j), Host)
		d.AddDuplex(s, "q0", acc, acc)
		d.AddDuplex(fmt.Sprintf("q%d", c.Hops), r, rcv, rcv)
	}
	for i := 0; i < c.Hops; i++ {
		for j := 0; j < c.Cross; j++ {
			s := d.AddNode(fmt.Sprintf("c%d_s%d", i, j), Host)
			r := d.AddNode(fmt.Sprintf("c%d_r%d", i, j), Host)
			d.AddDuplex(s, fmt.Sprintf("q%d", i), acc, acc)
			d.AddDuplex(fmt.Sprintf("q%d", i+1), r, rcv, rcv)
		}
	}
	return d, nil
}

// Chain is a built parking lot.
type Chain struct {
	Net                          *Network
	Config                       ChainConfig
	Routers                      []*Node
	Hops, Reverse                []*Link // Hops[i] is qi→qi+1, Reverse[i] is qi+1→qi
	Senders, Receivers           []*Node // end-to-end flows
	CrossSenders, CrossReceivers [][]*Node
}

// NewChain builds a chain on e.
func NewChain(e *Engine, c ChainConfig, opt Options) (*Chain, error) {
	d, err := c.Description()
	if err != nil {
		return nil, err
	}
	n, err := Build(e, d, opt)
	if err != nil {
		return nil, err
	}
	ch := &Chain{Net: n, Config: c}
	for i := 0; i <= c.Hops; i++ {
		ch.Routers = append(ch.Routers, n.Node(fmt.Sprintf("q%d", i)))
	}
	for i := 0; i < c.Hops; i++ {
		ch.Hops = append(ch.Hops, n.LinkByName(fmt.Sprintf("q%d>q%d", i, i+1)))
		ch.Reverse = append(ch.Reverse, n.LinkByName(fmt.Sprintf("q%d>q%d", i+1, i)))
	}
	for j := 0; j < c.Flows; j++ {
		ch.Senders = append(ch.Senders, n.Node(fmt.Sprintf("m_s%d", j)))
		ch.Receivers = append(ch.Receivers, n.Node(fmt.Sprintf("m_r%d", j)))
	}
	ch.CrossSenders = make([][]*Node, c.Hops)
	ch.CrossReceivers = make([][]*Node, c.Hops)
	for i := 0; i < c.Hops; i++ {
		for j := 0; j < c.Cross; j++ {
			ch.CrossSenders[i] = append(ch.CrossSenders[i], n.Node(fmt.Sprintf("c%d_s%d", i, j)))
			ch.CrossReceivers[i] = append(ch.CrossReceivers[i], n.Node(fmt.Sprintf("c%d_r%d", i, j)))
		}
	}
	return ch, nil
}
