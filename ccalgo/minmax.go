package ccalgo

// maxFilter is Kathleen Nichols' windowed running maximum as Linux
// lib/win_minmax.c implements it (and BBR's BtlBw filter uses, draft-
// cardwell-iccrg-bbr-congestion-control §4.1.1): it keeps the best, second
// best and third best samples of the window with their times, so the
// maximum over the last win time units is known in O(1) per sample
// without storing them all. Times are any monotone counter (BBR: packet-
// timed round trips).
type maxFilter struct {
	s [3]mmSample
}

type mmSample struct {
	t uint64  // time of the sample
	v float64 // value
}

// get returns the maximum over the window.
func (f *maxFilter) get() float64 { return f.s[0].v }

// reset makes (t, v) the only sample.
func (f *maxFilter) reset(t uint64, v float64) {
	f.s = [3]mmSample{{t, v}, {t, v}, {t, v}}
}

// update adds the sample v at time t to a window of win and returns the
// maximum.
func (f *maxFilter) update(win, t uint64, v float64) float64 {
	val := mmSample{t, v}
	if v >= f.s[0].v || t-f.s[2].t > win { // a new maximum, or nothing left in the window
		f.reset(t, v)
		return v
	}
	if v >= f.s[1].v {
		f.s[2], f.s[1] = val, val
	} else if v >= f.s[2].v {
		f.s[2] = val
	}
	return f.subwin(win, val)
}

// subwin ages the kept samples: when the best is older than the window the
// second and third move up; quarter and half windows keep the second and
// third best from going stale.
func (f *maxFilter) subwin(win uint64, val mmSample) float64 {
	dt := val.t - f.s[0].t
	switch {
	case dt > win:
		f.s[0], f.s[1], f.s[2] = f.s[1], f.s[2], val
		if val.t-f.s[0].t > win {
			f.s[0], f.s[1], f.s[2] = f.s[1], f.s[2], val
		}
	case f.s[1].t == f.s[0].t && dt > win/4:
		f.s[2], f.s[1] = val, val
	case f.s[2].t == f.s[1].t && dt > win/2:
		f.s[2] = val
	}
	return f.s[0].v
}
