package qdisc

// fifo is a ring buffer of packet pointers that grows by doubling and never
// shrinks, so a queue in steady state does not allocate. Its length is a
// power of two (16 << k), so an index wraps with a mask, not a division.
type fifo struct {
	buf     []*Packet
	head, n int
	bytes   int
}

func (f *fifo) push(p *Packet) {
	if f.n == len(f.buf) {
		nb := make([]*Packet, max(16, 2*len(f.buf)))
		for i := 0; i < f.n; i++ {
			nb[i] = f.buf[(f.head+i)&(len(f.buf)-1)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)&(len(f.buf)-1)] = p
	f.n++
	f.bytes += p.Size
}

func (f *fifo) pop() *Packet {
	if f.n == 0 {
		return nil
	}
	p := f.buf[f.head]
	f.buf[f.head] = nil
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
	f.bytes -= p.Size
	return p
}

func (f *fifo) peek() *Packet {
	if f.n == 0 {
		return nil
	}
	return f.buf[f.head]
}

// popBack removes the most recently pushed packet.
func (f *fifo) popBack() *Packet {
	if f.n == 0 {
		return nil
	}
	i := (f.head + f.n - 1) & (len(f.buf) - 1)
	p := f.buf[i]
	f.buf[i] = nil
	f.n--
	f.bytes -= p.Size
	return p
}
