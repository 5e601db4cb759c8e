// Package agent is cclab agent, the long-running per-host daemon of
// measurement campaigns (docs/campaigns.md, "Agents"), and its client.
//
// An agent listens for control connections (TCP, default port 5310) and
// runs a perf receiver on its data port (UDP). A control connection runs
// inside TLS 1.3 with an ephemeral self-signed certificate (tls.go); a
// client — the campaign scheduler — authenticates both ends inside it
// (handshake.go: a pre-shared key with HMAC-SHA256 over both sides' nonces,
// or Ed25519 keys with an authorized-keys file on each side, every proof
// bound to the TLS session by its RFC 9266 tls-exporter channel binding),
// then asks agents to receive or send
// transfers with a given controller, recovery, size or duration, and to
// answer time requests for clock offsets. RunTransfer drives one transfer
// between two agents and returns the sender's and receiver's JSON summaries,
// their qlogs on request, and the two hosts' clock offset with its bound.
//
// # Control protocol
//
// Inside TLS, every message is JSON after a 4-byte big-endian length (at most
// MaxRequest bytes to an agent, MaxReply from it), carrying the protocol
// Version, a type and a request ID the answer echoes. After the handshake
// (hello, challenge, auth, ok) the client sends requests that may run
// concurrently on one connection: time (T1 → T1, T2, T3), receive (a spec →
// a token and the data port), collect (a token → the receiver's summary once
// the flow ended), send (a spec, token and receiver address → the sender's
// summary), stats, ping, and cancel (of a request ID).
//
// An agent keeps no per-peer state before authentication: a connection's
// handshake state lives only in its goroutine, within -max-conns and
// -max-handshakes, and must finish within handshakeTimeout. A data flow is
// admitted only if its Initial carries the MAC of its own handshake under
// the admission key the agent handed out (over TLS) for an announced
// transfer (admission.go; single use, valid for that transfer's time
// limit); the key never crosses the data path.
//
// Caps: every spec is validated with the sender's parsers and against the
// agent's -max-bytes and -max-seconds (and a path probe's rate, controller
// probe, against -max-rate) before anything runs; -max-transfers
// bounds the transfers at once (sending and receiving); a transfer that
// outlives its limit is aborted.
//
// # The API
//
// The API is the campaign scheduler's contract (LoadCredentials,
// Config, NewServer, Serve, Addr, Dial, Client.Close, Client.ClockOffset,
// TransferSpec, TransferResult, RunTransfer), with additions only: the caps
// of Config are MaxBytes, MaxDuration and MaxTransfers (plus MaxRate, QlogMax,
// MaxConns, MaxHandshakes, Logf); TransferSpec has JSON tags;
// TransferResult.ID echoes the spec's ID; a refused or failed request is a
// *RemoteError (Code "refused" or "failed"), a lost connection wraps
// ErrClosed; Server.Stats and Client.Stats give the agent's counters,
// Server.DataAddr the data port, Client.Name the agent's key name;
// PSKCredentials and Ed25519Credentials build credentials without files;
// GenerateKey writes a key pair (cclab agent keygen).
package agent
