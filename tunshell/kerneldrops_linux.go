package tunshell

import (
	"sync"

	"github.com/vishvananda/netlink"

	"cclab/relay"
)

// txDrops reads the shell's TUN devices' transmit-queue drops: the
// packets the kernel dropped because the relay had not read the device's
// queue (TxQueueLen) in time, losses outside the link model. The relay
// reports them per statistics interval (relay.Config.KernelDrops,
// relay.HostLine.RxQueueDrops): the inner device's for the forward
// direction (host → outside), the outer device's for the reverse.
type txDrops struct {
	mu      sync.Mutex
	handles [2]*netlink.Handle // per direction: the namespace holding the device
	names   [2]string
}

// newTxDrops opens netlink handles on the devices' namespaces; nil when
// they cannot be opened (the drops are then unknown).
func (s *Shell) newTxDrops() *txDrops {
	in, err := netlink.NewHandleAt(s.ns.Handle())
	if err != nil {
		return nil
	}
	out, err := s.hostHandle()
	if err != nil {
		in.Close()
		return nil
	}
	return &txDrops{handles: [2]*netlink.Handle{in, out}, names: [2]string{innerName, s.outer.Name()}}
}

// drops returns direction dir's device's transmit drops so far.
func (t *txDrops) drops(dir int) (uint64, bool) {
	if t == nil || dir < relay.Fwd || dir > relay.Rev {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.handles[dir] == nil {
		return 0, false
	}
	l, err := t.handles[dir].LinkByName(t.names[dir])
	if err != nil || l.Attrs().Statistics == nil {
		return 0, false
	}
	return l.Attrs().Statistics.TxDropped, true
}

// close closes the handles.
func (t *txDrops) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, h := range t.handles {
		if h != nil {
			h.Close()
			t.handles[i] = nil
		}
	}
}
