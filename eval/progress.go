package eval

import (
	"strconv"
	"sync"
	"time"

	"cclab/scenario"
	"cclab/store"
)

// Progress event kinds (ProgressEvent.Kind).
const (
	ProgressPlan  = "plan"  // before any run: ProgressEvent.Todo lists the runs to do
	ProgressStart = "start" // a run began
	ProgressDone  = "done"  // a run ended (Status done or failed)
)

// ProgressEvent reports a sweep's progress to SweepOptions.Progress.
type ProgressEvent struct {
	Kind    string
	Spec    scenario.RunSpec   // the run (start, done)
	Label   string             // the run's point, e.g. "loss=0.01 cc=reno" (start, done)
	Status  string             // StatusDone or StatusFailed (done)
	Error   string             // the failure (done, failed)
	Wall    time.Duration      // how long the run took (done)
	Todo    []scenario.RunSpec // the runs to do, in order (plan)
	Skipped int                // runs already done in the store (plan)
	At      time.Time          // when it happened
}

// Expected wall time of a run before any run of its backend finished: a live
// run takes its duration in real time plus start-up and drain
// (liveOverhead); a simulator run a fraction of its duration (simSpeedPrior,
// measured with loss-resilience on a 2-core machine).
const (
	liveOverhead  = 500 * time.Millisecond
	simSpeedPrior = 0.02 // simulator wall time per second of simulated time
)

// ProgressMeter turns a sweep's progress events into what a progress display
// shows truthfully: the fraction of the sweep's expected wall time elapsed,
// the time left, the phase and the runs under way. Expected times are the
// runs' durations scaled by each backend's speed — a prior until runs of the
// backend finish, then their measured wall time per simulated second (sim)
// or their measured overhead beyond the run's duration (live) — divided by
// the backend's parallelism. So the fast simulator runs weigh little and
// the live runs, which take real time, weigh what they take.
type ProgressMeter struct {
	mu       sync.Mutex
	parallel map[string]int
	start    time.Time
	todo     []scenario.RunSpec
	done     map[string]bool      // by RunSpec.Key
	running  map[string]time.Time // by RunSpec.Key: start time
	labels   map[string]string    // running runs' labels
	wallSum  map[string]float64   // per backend: Σ wall s of finished runs
	durSum   map[string]float64   // per backend: Σ duration s of finished runs
	finished map[string]int       // per backend: runs finished now
	failed   int
	skipped  int
	phase    string
}

// NewProgressMeter returns a meter for a sweep with the given parallelism
// per backend (SweepOptions.Parallel; missing: 1).
func NewProgressMeter(parallel map[string]int) *ProgressMeter {
	return &ProgressMeter{parallel: parallel, done: map[string]bool{}, running: map[string]time.Time{}, labels: map[string]string{},
		wallSum: map[string]float64{}, durSum: map[string]float64{}, finished: map[string]int{}}
}

// Observe records an event.
func (m *ProgressMeter) Observe(ev ProgressEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Kind {
	case ProgressPlan:
		m.start, m.todo, m.skipped = ev.At, ev.Todo, ev.Skipped
	case ProgressStart:
		m.running[ev.Spec.Key] = ev.At
		m.labels[ev.Spec.Key] = runLabel(ev)
		m.phase = ev.Spec.Backend
	case ProgressDone:
		delete(m.running, ev.Spec.Key)
		delete(m.labels, ev.Spec.Key)
		m.done[ev.Spec.Key] = true
		b := ev.Spec.Backend
		m.finished[b]++
		m.wallSum[b] += ev.Wall.Seconds()
		m.durSum[b] += ev.Spec.Point.Scenario.Duration.Seconds()
		if ev.Status != store.StatusDone {
			m.failed++
		}
	}
}

func runLabel(ev ProgressEvent) string {
	return ev.Spec.Backend + " " + ev.Label + " seed " + strconv.Itoa(int(ev.Spec.Seed))
}

// expected returns the expected wall time of one run of s on one worker.
func (m *ProgressMeter) expected(s scenario.RunSpec) float64 {
	d := s.Point.Scenario.Duration.Seconds()
	b := s.Backend
	if b == scenario.BackendLive {
		over := liveOverhead.Seconds()
		if n := m.finished[b]; n > 0 {
			over = max(0, (m.wallSum[b]-m.durSum[b])/float64(n))
		}
		return d + over
	}
	speed := simSpeedPrior
	if m.durSum[b] > 0 {
		speed = m.wallSum[b] / m.durSum[b]
	}
	return d * speed
}

func (m *ProgressMeter) par(b string) float64 {
	if p := m.parallel[b]; p > 0 {
		return float64(p)
	}
	return 1
}

// ProgressState is what a display shows.
type ProgressState struct {
	Done, Total int           // runs finished now or before (skipped), runs in the sweep
	Failed      int           // runs that failed now
	Fraction    float64       // elapsed / (elapsed + remaining): expected wall time done, 0..1
	Elapsed     time.Duration // since the sweep started
	Remaining   time.Duration // expected wall time left
	Phase       string        // backend of the run that started last ("" before any)
	PhaseDone   int           // runs of Phase finished now
	PhaseTotal  int           // runs of Phase to do now
	Running     []string      // the runs under way ("live loss=0.01 cc=reno seed 1")
}

// State returns the progress at now.
func (m *ProgressMeter) State(now time.Time) ProgressState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := ProgressState{Total: len(m.todo) + m.skipped, Done: m.skipped + len(m.done), Failed: m.failed, Phase: m.phase,
		PhaseDone: m.finished[m.phase]}
	if !m.start.IsZero() && now.After(m.start) {
		st.Elapsed = now.Sub(m.start)
	}
	// Backends run one after another, so the remaining time adds up per
	// backend; within one, its runs share its workers.
	remaining := map[string]float64{}
	for _, s := range m.todo {
		if s.Backend == m.phase {
			st.PhaseTotal++
		}
		if m.done[s.Key] {
			continue
		}
		left := m.expected(s)
		if t, ok := m.running[s.Key]; ok {
			left = max(0, left-now.Sub(t).Seconds())
		}
		remaining[s.Backend] += left
	}
	var rem float64
	for b, r := range remaining {
		rem += r / m.par(b)
	}
	st.Remaining = time.Duration(rem * float64(time.Second))
	if total := st.Elapsed.Seconds() + rem; total > 0 {
		st.Fraction = st.Elapsed.Seconds() / total
	} else if st.Total > 0 && st.Done == st.Total {
		st.Fraction = 1
	}
	for _, k := range orderedKeys(m.todo, m.running) {
		st.Running = append(st.Running, m.labels[k])
	}
	return st
}

// orderedKeys returns the keys of running in the order of todo.
func orderedKeys(todo []scenario.RunSpec, running map[string]time.Time) []string {
	var out []string
	for _, s := range todo {
		if _, ok := running[s.Key]; ok {
			out = append(out, s.Key)
		}
	}
	return out
}
