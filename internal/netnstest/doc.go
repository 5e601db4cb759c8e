// Package netnstest builds, for tests, a network of hosts out of network
// namespaces whose traffic crosses cclab's own link model: hosts grouped in
// "continents", each host behind an emulated access link to its continent's
// router, and each further continent's router joined to the first one's by
// another emulated link (a star; with two continents, one inter-continental
// link). Every link is a link shell (package tunshell, docs/shell.md): a
// pair of TUN devices with the relay's packet-mode link model between them
// (rate, delay, loss process, queue, per direction). The routers are
// namespaces that forward (net.ipv4.ip_forward=1 in them, not on the
// machine) between their links.
//
//	continent 0                                         continent 1
//	 h1 ══access══╗                                 ╔══access══ h3
//	              router 0 ══════ inter link ══════ router 1
//	 h2 ══access══╝                                 ╚══access══ h4
//
// So an intra-continental round trip crosses two access links each way and
// an inter-continental one two access links and the inter link each way.
//
// Nothing touches the machine's own interfaces, routes or sysctls: every
// device, address, route and sysctl is inside a namespace of the network.
// The namespaces are unnamed and held by file descriptors (tunshell's
// Namespace), so nothing outlives the test process, not even after SIGKILL;
// Close (which Start registers with t.Cleanup, which also runs when the test
// panics) kills every process left in them. Addresses are IPv4, from
// 10.77.0.0/16 inside the namespaces only, so networks of concurrent tests
// do not interfere. Linux and root only.
package netnstest
