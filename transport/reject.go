package transport

// RejectReason says why a received datagram was discarded (counted in
// EndpointStats.Rejects).
type RejectReason uint8

// Reject reasons.
const (
	RejectNone         RejectReason = iota
	RejectTooShort                  // shorter than the common header
	RejectVersion                   // unknown wire version
	RejectType                      // unknown packet type
	RejectTruncated                 // a field runs past the end of the datagram
	RejectFlags                     // reserved flag bits set, or inconsistent flags (DATA without payload, ...)
	RejectInitialSize               // Initial not padded to its declared datagram size
	RejectParams                    // handshake parameter out of range
	RejectRequestSize               // application request longer than MaxRequest
	RejectSACK                      // malformed SACK block (too many, empty, overflowing)
	RejectRange                     // offset, length or window beyond MaxStreamOffset
	RejectTrailing                  // bytes after the last section
	RejectUnknownCID                // no connection has this destination CID
	RejectNotServer                 // Initial received by a client endpoint
	RejectTooManyConns              // Initial refused: EndpointConfig.MaxConns reached
	RejectUnexpected                // packet type not valid in the connection's state
	RejectAckUnsent                 // ACK or SACK of data never sent
	RejectFinalSize                 // data beyond the final size, or a changed final size
	RejectWindow                    // data beyond the advertised receive window (dropped)
	RejectConfig                    // incoming connection could not be built (bad controller/recovery spec)
	RejectOldPacket                 // packet for a connection that has finished
	RejectToken                     // Initial without a valid address-validation token (answered by a Retry), or a malformed token
	RejectHalfOpen                  // Initial refused: EndpointConfig.MaxHalfOpen handshakes are pending
	RejectPerSource                 // Initial refused: EndpointConfig.MaxConnsPerSource reached for its source address
	RejectPerPrefix                 // Initial refused: EndpointConfig.MaxConnsPerPrefix reached for its source prefix
	RejectReset                     // stateless reset matching no connection of ours (reset.go)
	RejectAuth                      // authentication failed: a forged or corrupt packet of an authenticated connection, or an Initial or Accept with a wrong tag (auth.go)
	RejectReplay                    // a packet of an authenticated connection received before, or older than the replay window
	RejectAuthRequired              // Initial refused: the server requires authentication (EndpointConfig.PSK)
	RejectCookie                    // Initial with a cookie (the stateless fallback) forged, expired, or minted for another address or handshake (answered by a Retry)
	NumRejectReasons
)

var rejectNames = [...]string{
	RejectNone: "none", RejectTooShort: "too_short", RejectVersion: "bad_version", RejectType: "bad_type",
	RejectTruncated: "truncated", RejectFlags: "bad_flags", RejectInitialSize: "initial_too_small",
	RejectParams: "bad_params", RejectRequestSize: "request_too_long", RejectSACK: "bad_sack",
	RejectRange: "out_of_range", RejectTrailing: "trailing_bytes", RejectUnknownCID: "unknown_cid",
	RejectNotServer: "not_server", RejectTooManyConns: "too_many_conns", RejectUnexpected: "unexpected",
	RejectAckUnsent: "ack_of_unsent", RejectFinalSize: "final_size", RejectWindow: "beyond_window",
	RejectConfig: "config", RejectOldPacket: "finished_conn", RejectToken: "bad_token",
	RejectHalfOpen: "half_open_full", RejectPerSource: "per_source_limit",
	RejectPerPrefix: "per_prefix_limit", RejectReset: "unknown_reset",
	RejectAuth: "auth_failed", RejectReplay: "replayed", RejectAuthRequired: "auth_required",
	RejectCookie: "bad_cookie",
}

// String returns the reason's snake_case name.
func (r RejectReason) String() string {
	if int(r) < len(rejectNames) {
		return rejectNames[r]
	}
	return "unknown"
}
