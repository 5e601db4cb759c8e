package transport

import (
	"time"

	"cclab/clock"
)

// ConnStats is a snapshot of a connection's counters and state.
type ConnStats struct {
	Start       clock.Time // when the conn was created
	Established clock.Time // when the handshake completed
	Finished    clock.Time // when it finished or failed (Never while running)

	// Sending (our direction).
	BytesSent           uint64               // stream bytes sent for the first time
	BytesRetransmitted  uint64               // stream bytes retransmitted
	BytesAcked          uint64               // stream bytes cumulatively acknowledged by the peer
	PacketsSent         uint64               // datagrams sent after the handshake (data, ACK, ping)
	Retransmits         uint64               // segments retransmitted
	SpuriousRetransmits uint64               // retransmissions found unnecessary by timestamps (RFC 3522)
	DSACKs              uint64               // D-SACK blocks received (RFC 2883)
	DSACKSpurious       uint64               // D-SACK blocks reporting a retransmission as duplicated (RFC 3708)
	Undos               uint64               // loss episodes found spurious and undone (undo.go)
	Lost                uint64               // segments declared lost
	RTOs                uint64               // retransmission timeouts (handshake included)
	RTOCauses           [NumRTOCauses]uint64 // RTOs per RTOCause
	Recoveries          uint64               // loss-recovery episodes
	DupAcks             uint64               // duplicate ACKs received
	AcksReceived        uint64               // ACK sections received
	ECEReceived         uint64               // ACKs with ECN-Echo
	ECNReductions       uint64               // window reductions for ECN (at most one per RTT)
	ECTSent             uint64               // data packets sent ECN-capable, ECT(0) (RFC 3168 §6.1.5: never retransmissions)
	ECN                 bool                 // ECN negotiated in the handshake (both sides asked for it)
	SACKBlocksIgnored   uint64               // SACK blocks beyond SND.NXT ignored (forged or corrupt; the rest of the ACK is used)
	PLPMTU              PLPMTUStats          // datagram size discovery (dplpmtud.go)

	// Receiving (the peer's direction).
	BytesReceived       uint64 // payload bytes stored (duplicates excluded, out-of-order included)
	BytesDelivered      uint64 // stream bytes delivered in order
	BytesRead           uint64 // stream bytes read by the application
	PacketsReceived     uint64 // short packets received
	AcksSent            uint64 // ACK sections sent
	DupSegments         uint64 // segments received entirely below the cumulative point
	DroppedBeyondWindow uint64 // segments (partly) beyond the advertised window
	OOOBytesDropped     uint64 // out-of-order bytes dropped after being stored (beyond the final size, or over the endpoint's out-of-order budget)
	CEReceived          uint64 // data packets received with CE
	ECTReceived         uint64 // data packets received with ECT(0) or ECT(1) (counted when ECN was negotiated)
	Rebinds             uint64 // peer address changes followed after path validation (NAT rebinding)
	PathChallenges      uint64 // path challenges sent to a new peer address (path.go)
	Authenticated       bool   // the connection is authenticated (a pre-shared key: auth.go)
	Encrypted           bool   // its packets are encrypted too (Config.Encrypt)
	AuthFailed          uint64 // packets of this connection dropped because authentication failed (forged or corrupt)
	Replayed            uint64 // packets of this connection dropped as replays (seen before, or older than the replay window)

	// RTT, congestion state.
	SRTT       time.Duration // smoothed RTT (RFC 6298)
	RTTVar     time.Duration // RTT variation (RFC 6298)
	MinRTT     time.Duration // minimum RTT sample
	LastRTT    time.Duration // latest RTT sample
	MeanSRTT   time.Duration // mean of SRTT over all samples
	RTTSamples int           // RTT samples taken
	RTO        time.Duration // current RTO including backoff
	Cwnd       int           // congestion window, bytes
	Ssthresh   int           // slow-start threshold, bytes
	InFlight   int           // RFC 6675 pipe, bytes
	PeerWindow int           // the peer's advertised window beyond our SND.NXT, bytes
	MSS        int           // payload bytes per full segment

	// Integrity: digest (Config.Digest: SHA-256, or CRC-32C in the first 4
	// bytes, or all zero for "none") of the stream we sent (in order, as
	// first sent) and of the stream we delivered. The sender's SentDigest
	// equals the receiver's RecvDigest iff the bytes match (with SHA-256).
	SentDigest [32]byte
	RecvDigest [32]byte
	SentFin    bool // our FIN was acknowledged
	RecvFin    bool // the peer's FIN arrived with all data before it
}

// BytesSent returns ConnStats.BytesSent (stream bytes sent for the first
// time) without building the whole snapshot: Stats copies and reads some
// 600 bytes, most of them in lines of the connection that a caller wanting
// one counter at its end (a simulator's ten-thousandth flow) finds out of
// the cache.
func (c *Conn) BytesSent() uint64 { return c.stats.BytesSent }

// BytesDelivered returns ConnStats.BytesDelivered (stream bytes delivered
// in order), as BytesSent.
func (c *Conn) BytesDelivered() uint64 { return c.stats.BytesDelivered }

// Stats returns a snapshot of the connection's counters.
func (c *Conn) Stats() ConnStats {
	s := c.stats
	s.SRTT, s.RTTVar, s.MinRTT, s.LastRTT = c.rtt.srtt, c.rtt.rttvar, c.rtt.min, c.rtt.latest
	s.MeanSRTT = c.rtt.meanSRTT()
	s.RTTSamples = c.rtt.samples
	s.RTO = c.rtt.current()
	if c.cc != nil {
		s.Cwnd, s.Ssthresh = c.cc.Cwnd(), c.cc.Ssthresh()
	}
	s.InFlight = c.sb.pipe
	s.PLPMTU = c.pmtuStats()
	if c.peerRight > c.sb.nxt {
		s.PeerWindow = int(min(c.peerRight-c.sb.nxt, 1<<31-1))
	}
	s.MSS = c.mss
	s.Rebinds, s.PathChallenges = c.path.rebinds, c.path.challenges
	s.AuthFailed, s.Replayed = c.auth.counts()
	s.Authenticated = c.auth != nil && c.auth.keyed
	s.Encrypted = s.Authenticated && c.auth.encrypt
	s.ECN = c.ecnOn
	if c.hashSent != nil {
		copy(s.SentDigest[:], c.hashSent.Sum(nil))
		copy(s.RecvDigest[:], c.hashRecv.Sum(nil))
	}
	s.SentFin = c.finAcked
	s.RecvFin = c.peerFin && c.rcvNxt == c.peerFinOff
	return s
}
