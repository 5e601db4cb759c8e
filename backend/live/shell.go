package liverun

import (
	"net/netip"

	"cclab/ippkt"
	"cclab/plan"
	"cclab/qdisc"
	"cclab/relay"
	"cclab/scenario"
)

// A run with kernel TCP flows (plan.Flow.Kernel) crosses a link shell
// (package tunshell) instead of the UDP relay: the same relay
// configuration in packet mode between a network namespace and the host.
// Every sender, cclab's and the kernel's, opens its socket inside the
// namespace; the receivers listen on the host's end. The relay tells the
// flows apart by their 5-tuples (qdisc.FlowKey5), so its link events carry
// each flow's number as on loopback (docs/scenarios.md "Kernel TCP flows").

// hasKernel reports whether the plan has a kernel TCP flow.
func hasKernel(p *plan.Plan) bool {
	for _, f := range p.Flows {
		if f.Kernel != nil {
			return true
		}
	}
	return false
}

// entry returns the address flow f's sender sends to: the relay's entry
// for its path on loopback; through a link shell, its receiver itself.
func (lr *liveRun) entry(i int, f *plan.Flow) netip.AddrPort {
	if lr.shell != nil {
		if f.Mode == scenario.ModeUDP {
			return lr.urecv.LocalAddr()
		}
		return lr.recv.LocalAddr()
	}
	if i >= 0 {
		return lr.rl.EntryAddr(i)
	}
	return lr.rl.Addr()
}

// senderHost is the address the senders' sockets bind: the loopback host,
// or the namespace's end of a link shell.
func (lr *liveRun) senderHost() string {
	if lr.shell != nil {
		return lr.shell.inner().String()
	}
	return lr.r.host()
}

// inShell runs f where the senders' sockets belong: inside the link shell's
// namespace, or here on loopback.
func (lr *liveRun) inShell(f func() error) error {
	if lr.shell != nil {
		return lr.shell.do(f)
	}
	return f()
}

// flowKey returns the relay's flow key of the forward packets of flow f
// from local to its receiver to: the UDP relay's key of its session, or
// through a link shell the packet's 5-tuple key (the same for UDP).
func (lr *liveRun) flowKey(local, to netip.AddrPort, f *plan.Flow) uint64 {
	switch {
	case lr.shell == nil:
		return lr.rl.FlowKey(local, relay.Fwd)
	case f.Kernel != nil:
		return qdisc.FlowKey5(local, to, ippkt.ProtoTCP)
	}
	return qdisc.FlowKey(local, to)
}
