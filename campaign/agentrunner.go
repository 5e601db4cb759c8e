package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"cclab/agent"
)

// AgentRunner runs transfers through the hosts' agents (package agent):
// one authenticated control connection per agent, dialled on first use and
// kept, redialled after it fails.
type AgentRunner struct {
	Creds *agent.Credentials

	mu      sync.Mutex
	clients map[string]*agent.Client // by agent address

	// Tests: dialFn replaces agent.Dial; onBusy sees each busy refusal
	// and the wait before the next dial.
	dialFn func(ctx context.Context, addr string, creds *agent.Credentials) (*agent.Client, error)
	onBusy func(err error, wait time.Duration)
}

// A busy agent (over its -max-conns or -max-handshakes, agent.ErrBusy) is
// dialled again after busyBackoffMin, the wait doubling up to
// busyBackoffMax, for at most busyRetryFor or until the transfer's context
// ends (schedule.timeout); then the attempt fails (dial_error).
const (
	busyBackoffMin = 100 * time.Millisecond
	busyBackoffMax = 5 * time.Second
	busyRetryFor   = 2 * time.Minute
)

// NewAgentRunner returns a runner with the campaign's credentials.
func NewAgentRunner(creds *agent.Credentials) *AgentRunner {
	return &AgentRunner{Creds: creds, clients: map[string]*agent.Client{}}
}

// Close closes the control connections.
func (r *AgentRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a, c := range r.clients {
		c.Close()
		delete(r.clients, a)
	}
	return nil
}

// client returns the connection to an agent, dialling it if needed; a
// failed dial is a *Failure with its cause.
func (r *AgentRunner) client(ctx context.Context, h Host) (*agent.Client, error) {
	r.mu.Lock()
	c := r.clients[h.Agent]
	r.mu.Unlock()
	if c != nil {
		return c, r.checkKey(h, c.Name())
	}
	c, err := r.dial(ctx, h.Agent)
	if err != nil {
		return nil, &Failure{dialCause(err), err}
	}
	if err := r.checkKey(h, c.Name()); err != nil {
		c.Close()
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.clients[h.Agent]; old != nil { // dialled meanwhile by another transfer
		c.Close()
		return old, nil
	}
	r.clients[h.Agent] = c
	return c, nil
}

// checkKey refuses an agent that authenticated with another key than the
// spec binds to its host (Host.Key), with Ed25519 credentials (with a PSK
// the name is the shared key's). Not retried within the run.
func (r *AgentRunner) checkKey(h Host, name string) error {
	if r.Creds == nil || r.Creds.PublicKey() == nil || name == h.KeyName() {
		return nil
	}
	return &Failure{CauseUnauthorized, fmt.Errorf("the agent at %s authenticated with key %q, but the spec binds host %q to key %q (hosts[].key, default the host's name): not storing its results under %q",
		h.Agent, name, h.Name, h.KeyName(), h.Name)}
}

// dial dials an agent, again with backoff while it refuses as busy.
func (r *AgentRunner) dial(ctx context.Context, addr string) (*agent.Client, error) {
	dial := r.dialFn
	if dial == nil {
		dial = agent.Dial
	}
	giveUp := time.Now().Add(busyRetryFor)
	for wait := busyBackoffMin; ; wait = min(2*wait, busyBackoffMax) {
		c, err := dial(ctx, addr, r.Creds)
		if err == nil || !errors.Is(err, agent.ErrBusy) || time.Now().Add(wait).After(giveUp) {
			return c, err
		}
		if r.onBusy != nil {
			r.onBusy(err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// drop forgets a failed connection.
func (r *AgentRunner) drop(h Host, c *agent.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients[h.Agent] == c {
		delete(r.clients, h.Agent)
		c.Close()
	}
}

func dialCause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, agent.ErrUnauthorized):
		return CauseUnauthorized
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseDialRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return CauseTimeout
	}
	return CauseDial
}

// Run runs one transfer: the sending host's agent sends to the receiving
// host's data address (Host.Data), and both summaries come back.
func (r *AgentRunner) Run(ctx context.Context, t Transfer) (*Outcome, error) {
	send, err := r.client(ctx, t.From)
	if err != nil {
		return nil, err
	}
	recv, err := r.client(ctx, t.To)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := agent.RunTransfer(ctx, send, recv, agent.TransferSpec{
		ID: t.Campaign + "/" + t.ID(), ReceiverHost: cmp.Or(t.Relay, t.To.Data), CC: t.Variant.CC, Recovery: t.Variant.Recovery,
		Bytes: t.Settings.Bytes, Seconds: t.Settings.Seconds, MaxDatagram: t.Settings.MaxDatagram, Qlog: t.Settings.Qlog,
	})
	if err != nil {
		if errors.Is(err, agent.ErrClosed) {
			r.drop(t.From, send)
			r.drop(t.To, recv)
		}
		var re *agent.RemoteError
		switch {
		case errors.Is(err, agent.ErrUnauthorized):
			return nil, &Failure{CauseUnauthorized, err}
		case errors.As(err, &re) && re.Code == "refused":
			return nil, &Failure{CauseAgentRefused, err}
		case ctx.Err() != nil:
			return nil, &Failure{CauseTimeout, err}
		}
		return nil, &Failure{CauseTransfer, err}
	}
	o, err := SenderOutcome(start, res.Sender, res.Receiver)
	if err != nil {
		return nil, err
	}
	o.ClockOffset, o.OffsetRTT = res.ClockOffset, res.OffsetRTT
	o.SenderQlog, o.ReceiverQlog = res.SenderQlog, res.ReceiverQlog
	return o, nil
}
