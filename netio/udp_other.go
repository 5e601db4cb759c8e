//go:build !linux

package netio

type sysState struct{ x *XNetConn }

func (u *UDPConn) sysInit() error {
	u.sys.x = NewXNetConn(u.c)
	return nil
}

// ReadBatch receives up to len(ms) datagrams.
func (u *UDPConn) ReadBatch(ms []Message) (int, error) { return u.sys.x.ReadBatch(ms) }

// WriteBatch sends ms.
func (u *UDPConn) WriteBatch(ms []Message) (int, error) { return u.sys.x.WriteBatch(ms) }
