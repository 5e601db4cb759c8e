package transport

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"cclab/ccalgo"
	"cclab/event"
)

// Defaults of Config.
const (
	// DefaultCC is the stream mode's default congestion controller: Reno
	// (RFC 5681), the reference the other controllers are compared with.
	DefaultCC = "reno"
	// DefaultRecovery is the default loss-recovery strategy: RACK-TLP loss
	// detection (RFC 8985) with PRR (RFC 6937) and undo of spurious
	// episodes, the recovery Linux runs over SACK. Chosen over newreno (no
	// SACK), sack, prr and their lostretx variants on the simulated
	// evidence in docs/compat.md ("The default recovery").
	DefaultRecovery = "rack"
	// DefaultMaxDatagram is the default UDP payload size, bytes: safe on the
	// Internet (QUIC's RFC 9000 §14 minimum of 1200 bytes).
	DefaultMaxDatagram = 1200
	// DefaultDelayedAck is the delayed-ACK timer, 40 ms (Linux's minimum;
	// RFC 5681 §4.2 requires less than 500 ms).
	DefaultDelayedAck = 40 * time.Millisecond
	// MaxDelayedAck bounds Config.DelayedAck from above (exclusive): RFC 1122
	// §4.2.3.2 and RFC 5681 §4.2, an ACK "MUST" be sent within 0.5 s.
	MaxDelayedAck = 500 * time.Millisecond
	// NoDelayedAck is the Config.DelayedAck that turns delayed ACKs off:
	// every data segment is acknowledged at once, whatever AckEvery (a
	// user's delayed-ACK time of 0, as Linux's quick-ACK mode).
	NoDelayedAck time.Duration = -1
	// DefaultAckEvery is the number of full-sized segments after which an
	// ACK is sent at once (RFC 5681 §4.2: at least every second full-sized
	// segment).
	DefaultAckEvery = 2
	// MaxAckEvery bounds Config.AckEvery, segments. Above 2 the receiver
	// sends stretch ACKs (RFC 2525 §2.13), which RFC 5681 §4.2 "SHOULD"
	// avoid but a user may choose (e.g. to model ACK thinning); cclab's
	// bound, not an RFC's.
	MaxAckEvery = 64
	// DefaultRecvWindow is the receive window (receive buffer), bytes.
	DefaultRecvWindow = 8 << 20
	// MaxRecvWindow bounds Config.RecvWindow, bytes: 1 GiB, TCP's largest
	// window with window scaling (RFC 7323 §2.3, shift 14).
	MaxRecvWindow = 1 << 30
	// DefaultSendBuffer is the Write send buffer, bytes.
	DefaultSendBuffer = 4 << 20
	// DefaultIdleTimeout ends a connection that hears nothing for this long:
	// 2 min, twice the default MaxRTO, so that a sender backing off its
	// retransmission timer over a very lossy path is not given up early.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultHandshakeTimeout ends a Dial that gets no Accept for this long.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultGiveUp ends a connection whose retransmissions have gone
	// unanswered this long after the first unanswered RTO: 15 min, about
	// Linux's tcp_retries2 = 15 (924.6 s with a 200 ms RTO; RFC 1122
	// §4.2.3.5 asks for at least 100 s). It also bounds how long a receiver
	// waits in silence for the rest of the peer's stream.
	DefaultGiveUp = 15 * time.Minute
	// MinGiveUp and MaxGiveUp bound Config.GiveUp.
	MinGiveUp = time.Second
	MaxGiveUp = 24 * time.Hour
	// DefaultMaxConns bounds the connections of a server endpoint.
	DefaultMaxConns = 4096
	// DefaultMaxHalfOpen bounds a server endpoint's half-open connections:
	// accepted (the client's address validated by a Retry token) but not
	// yet confirmed by the client's first packet after the Accept.
	DefaultMaxHalfOpen = 256
	// DefaultMaxConnsPerSource bounds the connections (half-open and
	// established) from one source IP address.
	DefaultMaxConnsPerSource = 128
	// DefaultMaxOOOBytes bounds an endpoint's out-of-order receive memory,
	// all connections together: 64 MiB, eight full default receive
	// windows (docs/security.md).
	DefaultMaxOOOBytes = 64 << 20
)

// Config configures one connection. Zero fields take the endpoint's
// Defaults, then the package defaults (DefaultConfig).
type Config struct {
	MaxDatagram int           // largest UDP payload sent and accepted, bytes (default 1200, >= MinDatagram)
	CC          string        // congestion controller spec, e.g. "reno" or "dca:x=2" (default DefaultCC, "reno")
	Recovery    string        // loss-recovery strategy spec, e.g. "newreno" or "sack:lostretx" (default DefaultRecovery, "rack")
	MinRTO      time.Duration // RTO lower bound (default 200 ms)
	InitialRTO  time.Duration // RTO before the first RTT sample (default 1 s, RFC 6298 §2.1)
	MaxRTO      time.Duration // RTO upper bound (default 60 s)
	DelayedAck  time.Duration // delayed-ACK timer, < MaxDelayedAck (default 40 ms; NoDelayedAck: every segment ACKed at once)
	AckEvery    int           // ACK at once after this many full-sized in-order segments, packets, 1..MaxAckEvery (default 2)
	RecvWindow  int           // receive buffer = largest advertised window, bytes, 2 MaxDatagram..MaxRecvWindow (default 8 MiB)
	// AckFirst has the receiver acknowledge the first data segment it
	// receives at once instead of holding it for its pair, as ns-3.37's
	// TcpSocketBase does ("Always respond to first data packet to speed
	// up the connection": ProcessSynRcvd sets m_delAckCount to
	// m_delAckMaxCount, tcp-socket-base.cc:2404-2406); every later
	// segment follows AckEvery and DelayedAck, so the segments after the
	// first are paired (2, 3), (4, 5), ... (docs/compat.md "ns-3's first
	// ACK"). A receiver's choice, harmless on any path; default off
	// (RFC 5681 §4.2's delayed ACK from the first segment).
	AckFirst bool
	// MaxWindow caps the data the sender has outstanding beyond snd.una,
	// bytes, whatever cwnd and the peer's window allow (a per-flow maximum
	// window as ns-2's window_); 0: no cap. At least 2 MaxDatagram.
	MaxWindow  int
	SendBuffer int    // Write buffer, bytes (default 4 MiB)
	ECN        bool   // negotiate ECN: send ECT(0), echo CE (RFC 3168)
	Digest     string // stream integrity digest: "sha256" (default), "crc32c" (fast, not cryptographic) or "none"
	Request    []byte // client: opaque application request carried in the Initial (<= MaxRequest bytes)
	// SealRequest, if not nil, is called by a client's Dial with the
	// connection's ID (its own connection ID), the destination connection
	// ID of its Initial and Request, and what it returns is carried in the
	// Initial instead (at most MaxRequest bytes, or Dial fails): an
	// application binds its request to this very handshake, e.g. with a
	// MAC over the two IDs, so that a request captured on the wire admits
	// no other connection.
	SealRequest func(id, initialDCID uint64, request []byte) []byte
	// PSK, if not nil, authenticates the connection (auth.go, docs/wire.md
	// "Authentication"): every packet after the handshake is AES-128-GCM
	// under keys derived from it. A client dials with it (and ends with
	// ErrAuthDowngrade if the answer is not authenticated); a server's
	// Configure sets it to require that key of the connection. At least
	// MinPSK bytes. Not taken from the endpoint's Defaults. The packets
	// are authenticated (AES-128-GMAC), and encrypted too with Encrypt.
	PSK []byte
	// PSKName is the key's name a client's Initial carries, so the server
	// finds it (EndpointConfig.PSK); at most MaxKeyName bytes.
	PSKName string
	// Encrypt, with PSK, has a client ask for its packets to be encrypted
	// as well as authenticated (the server follows the client's choice).
	Encrypt bool

	IdleTimeout      time.Duration // fail with ErrIdleTimeout after this long without a datagram (default 2 min; keep it above MaxRTO)
	HandshakeTimeout time.Duration // fail with ErrHandshakeTimeout if no Accept arrives (default 10 s)
	// GiveUp ends a connection with ErrGiveUp once its retransmissions
	// have gone unanswered this long after the first unanswered RTO
	// (default 15 min, MinGiveUp..MaxGiveUp). A connection still
	// retransmitting is never ended by IdleTimeout, and one waiting for the
	// rest of the peer's stream waits max(IdleTimeout, GiveUp).
	GiveUp time.Duration

	// PLPMTUMax turns datagram size discovery on (DPLPMTUD, RFC 8899;
	// dplpmtud.go): the connection starts at the handshake's size
	// (MaxDatagram and the peer's) and probes up to this many bytes, the
	// MAX_PLPMTU of RFC 8899 §5.1.2 (the interface MTU less the IP and UDP
	// headers), MaxDatagram..MaxUDPPayload; 0: no discovery, the
	// handshake's size throughout.
	PLPMTUMax int

	// TCPHandshake, for simulation only, has a client run its handshake at
	// the sizes of TCP's: the Initial at its encoded length (31 bytes
	// without a request or token: 59 on the wire with IPv4 and UDP, a TCP
	// SYN with timestamps, window scale and SACK-permitted is 56) instead
	// of padded to MaxDatagram, and, when the Accept arrives, a pure ACK
	// (26 bytes, 54 on the wire, as TCP's third handshake packet) before
	// any data, so that flows starting together reach a bottleneck as
	// TCP's do (docs/compat.md "Handshake timing"). The padding is what
	// gives a server its amplification budget (RFC 9000 §8.1, §14.1): a
	// server rejects an unpadded Initial (initial_too_small) unless its
	// EndpointConfig.AcceptUnpaddedInitial is set, which only the
	// simulator does. Not with PSK (the auth section is written into the
	// padding).
	TCPHandshake bool

	Sink event.Sink // receives this connection's events; nil: the endpoint's Sink
}

// DefaultConfig returns the package defaults.
func DefaultConfig() Config {
	return Config{
		MaxDatagram: DefaultMaxDatagram, CC: DefaultCC, Recovery: DefaultRecovery, Digest: "sha256",
		MinRTO: DefaultMinRTO, InitialRTO: DefaultInitialRTO, MaxRTO: DefaultMaxRTO,
		DelayedAck: DefaultDelayedAck, AckEvery: DefaultAckEvery,
		RecvWindow: DefaultRecvWindow, SendBuffer: DefaultSendBuffer,
		IdleTimeout: DefaultIdleTimeout, HandshakeTimeout: DefaultHandshakeTimeout, GiveUp: DefaultGiveUp,
	}
}

// fill replaces zero fields of c with those of d.
func (c *Config) fill(d Config) {
	fillZero(&c.MaxDatagram, d.MaxDatagram)
	fillZero(&c.CC, d.CC)
	fillZero(&c.Recovery, d.Recovery)
	fillZero(&c.MinRTO, d.MinRTO)
	fillZero(&c.InitialRTO, d.InitialRTO)
	fillZero(&c.MaxRTO, d.MaxRTO)
	fillZero(&c.DelayedAck, d.DelayedAck)
	fillZero(&c.AckEvery, d.AckEvery)
	fillZero(&c.RecvWindow, d.RecvWindow)
	fillZero(&c.AckFirst, d.AckFirst)
	fillZero(&c.SendBuffer, d.SendBuffer)
	fillZero(&c.Digest, d.Digest)
	fillZero(&c.ECN, d.ECN)
	fillZero(&c.IdleTimeout, d.IdleTimeout)
	fillZero(&c.HandshakeTimeout, d.HandshakeTimeout)
	fillZero(&c.GiveUp, d.GiveUp)
	fillZero(&c.PLPMTUMax, d.PLPMTUMax)
	fillZero(&c.TCPHandshake, d.TCPHandshake)
	fillZero(&c.Sink, d.Sink)
}

// fillZero sets *v to d if *v is the zero value (a default for an unset
// configuration field).
func fillZero[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Validate checks c (after defaults are filled) and names the faulty field.
func (c *Config) Validate() error {
	if err := c.validateFields(); err != nil {
		return err
	}
	if err := ccalgo.Registry.Validate(c.CC); err != nil {
		return err
	}
	return Recoveries.Validate(c.Recovery)
}

// validateFields is Validate without the controller and recovery specs
// (an endpoint checks those once per spec: Endpoint.connSpec).
func (c *Config) validateFields() error {
	switch {
	case c.MaxDatagram < MinDatagram || c.MaxDatagram > MaxUDPPayload:
		return fmt.Errorf("transport: MaxDatagram=%d: must be %d..%d bytes", c.MaxDatagram, MinDatagram, MaxUDPPayload)
	case c.MinRTO <= 0 || c.MaxRTO < c.MinRTO:
		return fmt.Errorf("transport: MinRTO=%v MaxRTO=%v: need 0 < MinRTO <= MaxRTO", c.MinRTO, c.MaxRTO)
	case c.InitialRTO <= 0:
		return fmt.Errorf("transport: InitialRTO=%v: must be positive", c.InitialRTO)
	case CheckPLPMTUMax(c.PLPMTUMax, c.MaxDatagram) != nil:
		return fmt.Errorf("transport: PLPMTUMax=%d: %v", c.PLPMTUMax, CheckPLPMTUMax(c.PLPMTUMax, c.MaxDatagram))
	case c.DelayedAck != NoDelayedAck && CheckDelayedAck(c.DelayedAck) != nil:
		return fmt.Errorf("transport: DelayedAck=%v: %v", c.DelayedAck, CheckDelayedAck(c.DelayedAck))
	case CheckAckEvery(c.AckEvery) != nil:
		return fmt.Errorf("transport: AckEvery=%d: %v", c.AckEvery, CheckAckEvery(c.AckEvery))
	case CheckRecvWindow(c.RecvWindow, c.MaxDatagram) != nil:
		return fmt.Errorf("transport: RecvWindow=%d: %v", c.RecvWindow, CheckRecvWindow(c.RecvWindow, c.MaxDatagram))
	case c.SendBuffer < 1:
		return fmt.Errorf("transport: SendBuffer=%d: must be > 0 bytes", c.SendBuffer)
	case c.MaxWindow != 0 && c.MaxWindow < 2*c.MaxDatagram:
		return fmt.Errorf("transport: MaxWindow=%d: must hold 2 datagrams (%d bytes), or 0 for no cap", c.MaxWindow, 2*c.MaxDatagram)
	case c.Digest != "sha256" && c.Digest != "crc32c" && c.Digest != "none":
		return fmt.Errorf("transport: Digest=%q: want sha256, crc32c or none", c.Digest)
	case c.GiveUp < MinGiveUp || c.GiveUp > MaxGiveUp:
		return fmt.Errorf("transport: GiveUp=%v: must be %v..%v", c.GiveUp, MinGiveUp, MaxGiveUp)
	case len(c.Request) > MaxRequest:
		return fmt.Errorf("transport: Request is %d bytes, at most %d", len(c.Request), MaxRequest)
	case c.TCPHandshake && c.PSK != nil:
		return fmt.Errorf("transport: TCPHandshake with PSK: the Initial's auth section needs its padding")
	}
	return checkPSK(c.PSK, c.PSKName)
}

// SetReceiving copies into c the receiving side's settings r sets:
// AckEvery, DelayedAck, RecvWindow and AckFirst (r's zero fields leave c's
// alone).
func (c *Config) SetReceiving(r Config) {
	c.AckEvery = cmp.Or(r.AckEvery, c.AckEvery)
	c.DelayedAck = cmp.Or(r.DelayedAck, c.DelayedAck)
	c.RecvWindow = cmp.Or(r.RecvWindow, c.RecvWindow)
	c.AckFirst = cmp.Or(r.AckFirst, c.AckFirst)
}

// CheckAckEvery checks a delayed-ACK segment count (Config.AckEvery, the
// tools' -ack-every, a scenario's ack_every); the caller names the setting.
func CheckAckEvery(n int) error {
	if n < 1 || n > MaxAckEvery {
		return fmt.Errorf("must be 1..%d full-sized segments (RFC 5681 §4.2: at least every second; above 2 are stretch ACKs)", MaxAckEvery)
	}
	return nil
}

// CheckDelayedAck checks a delayed-ACK time as a user gives it (the tools'
// -delayed-ack, a scenario's delayed_ack), where 0 means no delayed ACKs
// (NoDelayedAck).
func CheckDelayedAck(d time.Duration) error {
	if d < 0 || d >= MaxDelayedAck {
		return fmt.Errorf("must be at least 0 (0: ACK every segment at once) and below %v (RFC 1122 §4.2.3.2)", MaxDelayedAck)
	}
	return nil
}

// UserDelayedAck turns a user's delayed-ACK time (0: none) into
// Config.DelayedAck, whose zero means the default.
func UserDelayedAck(d time.Duration) time.Duration {
	if d == 0 {
		return NoDelayedAck
	}
	return d
}

// CheckRecvWindow checks a receive window (Config.RecvWindow, the tools'
// -window, a scenario's recv_window) against the largest datagram the
// receiver accepts, maxDatagram bytes.
func CheckRecvWindow(n, maxDatagram int) error {
	if n < 2*maxDatagram || n > MaxRecvWindow {
		return fmt.Errorf("must be %d..%d bytes (two %d-byte datagrams .. 1 GiB, RFC 7323 §2.3)", 2*maxDatagram, MaxRecvWindow, maxDatagram)
	}
	return nil
}

// EndpointConfig configures an Endpoint.
type EndpointConfig struct {
	Server   bool       // accept incoming connections
	Defaults Config     // defaults for Dial and for accepted connections
	Sink     event.Sink // events of connections whose Config has no Sink; nil: discard
	// Rand draws connection IDs and seeds each controller's random source.
	// Live drivers must seed it unpredictably (crypto/rand): the server's
	// connection ID is what validates a client's address. nil: a fixed seed.
	Rand *rand.Rand
	// MaxConns bounds the live connections of the endpoint (default 4096).
	MaxConns int
	// Configure, if set, is called for each incoming connection with the
	// client's request before the connection is built, so a server can pick
	// per-request parameters (e.g. the controller in reverse mode). cfg
	// and request are valid only during the call (the endpoint reuses
	// both): Configure must not keep them.
	Configure func(request []byte, cfg *Config)
	// Dgram configures the datagram mode (DialDgram, AcceptDgram).
	Dgram DgramEndpointConfig
	// Entropy supplies the Retry-token keys and the path-challenge data,
	// which must be unpredictable: live drivers pass crypto/rand.Reader.
	// nil: a ChaCha8 stream seeded from Rand (deterministic, for the
	// simulator and tests).
	Entropy io.Reader
	// NoRetry turns off stateless address validation: an Initial creates a
	// connection without a Retry round trip (the simulator, whose paths
	// carry no attacker). Live servers must leave it false.
	NoRetry bool
	// AcceptUnpaddedInitial has a server accept an Initial shorter than
	// the datagram size it declares (Config.TCPHandshake) instead of
	// rejecting it as initial_too_small: such an Initial gives no
	// amplification budget (RFC 9000 §8.1, §14.1), so only the simulator,
	// whose paths carry no attacker, sets it. Live servers must leave it
	// false.
	AcceptUnpaddedInitial bool
	// TokenLifetime bounds the age of a Retry token (default 10 s); the
	// token key is replaced every TokenLifetime.
	TokenLifetime time.Duration
	// MaxHalfOpen bounds the half-open connections (default 256), apart
	// from MaxConns.
	MaxHalfOpen int
	// MaxConnsPerSource bounds the connections from one source IP address
	// (default 128).
	MaxConnsPerSource int
	// MaxConnsPerPrefix bounds the connections from one source prefix, an
	// IPv4 /24 or an IPv6 /56 (default DefaultMaxConnsPerPrefix; with
	// NoRetry, MaxConns).
	MaxConnsPerPrefix int
	// MaxHalfOpenPerSource and MaxHalfOpenPerPrefix bound the half-open
	// connections from one source address and one source prefix (defaults
	// DefaultMaxHalfOpenPerSource, DefaultMaxHalfOpenPerPrefix; with
	// NoRetry, MaxHalfOpen).
	MaxHalfOpenPerSource int
	MaxHalfOpenPerPrefix int
	// EvictIdle is how long an established server connection must have
	// heard nothing before a new validated peer may evict it when a limit
	// is reached (default DefaultEvictIdle; admission.go).
	EvictIdle time.Duration
	// ResetKey, if not nil, is the key of the stateless-reset tokens
	// (reset.go, RFC 9000 §10.3): a server with one gives each client the
	// token of its connection and answers packets for a connection it has
	// no state for with a stateless reset. The same key after a restart
	// (kept in a file) lets the clients of the old process end at once.
	// nil: no tokens, no resets (the simulator). At least MinResetKey
	// bytes: NewEndpoint panics on a shorter key.
	ResetKey []byte
	// MaxOOOBytes bounds the out-of-order receive memory of all the
	// endpoint's connections together, bytes (default 64 MiB): beyond it a
	// connection over its share (MaxOOOBytes / connections) drops the
	// farthest arriving out-of-order data, counted.
	MaxOOOBytes int
	// PSK, if not nil, looks up a pre-shared key by the name an
	// authenticated Initial carries (nil: no such key). With it, the server
	// requires every connection to be authenticated (auth.go) unless
	// AllowUnauthenticated; others are refused with CloseAuthRequired.
	PSK func(name string) []byte
	// AllowUnauthenticated admits unauthenticated connections beside the
	// authenticated ones when PSK is set.
	AllowUnauthenticated bool
	// Buffers recycles the connections' rings and scoreboards (bufpool.go)
	// and holds the packet scratch the endpoints sharing it use.
	// Endpoints driven by one goroutine (a simulation's hosts) share one;
	// nil: the endpoint makes its own. Not safe for concurrent use.
	Buffers *Buffers
}
