//go:build !linux

package udp

import "cclab/netio"

// gsoSender is the UDP GSO fast path; only Linux has one.
type gsoSender struct{}

var errGSOUnsupported error

func newGSO(netio.Conn) *gsoSender { return nil }

func (*gsoSender) send(ms []netio.Message, offs []int) (int, int, error) { return 0, 0, nil }
