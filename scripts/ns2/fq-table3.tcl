# The CSFQ paper's Table 3 (Stoica, Shenker & Zhang, SIGCOMM 1998) in ns-2, to compare
# cclab's fair-queueing study (case udp-tcp) with what ns-2 itself gives on the
# paper's setup: 1 UDP flow (CBR at the link rate, 1000-byte packets) and 19 TCP
# flows over a 10 Mbit/s bottleneck with a 100 ms propagation delay and a
# 64-packet buffer; every other link 10 Mbit/s, 1 ms. docs/studies/fair-queueing.md,
# "FIFO: the paper's UDP source and packet sizes".
#
# usage: ns fq-table3.tcl QUEUE RANDOM SEED DURATION [UDPSIZE]
#   QUEUE: DropTail, RED or DRR (FRED and CSFQ are not part of ns-2);
#   RANDOM: the CBR's random_ (1: gaps uniform in [0.5, 1.5) intervals);
#   env KNOBS: Tcl evaluated before the topology, e.g.
#     KNOBS='Agent/TCP set packetSize_ 960' (1000-byte TCP packets on the wire)
#     KNOBS='set tcpclass Agent/TCP' (Tahoe instead of Reno).
# Prints one RESULT line: the TCP flows' mean highest cumulative ACK (packets
# delivered in order) and the UDP flow's received and lost packets.
# Runs with Debian's ns2 package (2.35): apt-get install ns2; scripts/ns2/fq-table3.sh.
set qtype [lindex $argv 0]
set rnd   [lindex $argv 1]
set seed  [lindex $argv 2]
set dur   [lindex $argv 3]
set usize 1000
if {$argc > 4} { set usize [lindex $argv 4] }
ns-random $seed
global defaultRNG
$defaultRNG seed $seed
# ns-2 of 1997-98 TCP defaults
Agent/TCP set window_ 20
Agent/TCP set windowInit_ 1
Agent/TCP set packetSize_ 1000
Agent/TCP set tcpTick_ 0.1
Agent/TCP set minrto_ 0
Agent/TCP set syn_ false
Queue/RED set gentle_ false
Queue/RED set thresh_ 16
Queue/RED set maxthresh_ 32
Queue/RED set q_weight_ 0.002
Queue/RED set linterm_ 10
Queue/RED set bytes_ false
Queue/RED set queue_in_bytes_ false
Queue/RED set wait_ true
if {[info exists env(KNOBS)]} { eval $env(KNOBS) }
if {![info exists tcpclass]} { set tcpclass Agent/TCP/Reno }
set ns [new Simulator]
set r1 [$ns node]
set r2 [$ns node]
set n 20
for {set i 0} {$i < $n} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r1 10Mb 1ms DropTail
  $ns duplex-link $r2 $d($i) 10Mb 1ms DropTail
}
$ns simplex-link $r1 $r2 10Mb 100ms $qtype
$ns simplex-link $r2 $r1 10Mb 100ms DropTail
$ns queue-limit $r1 $r2 64
if {[info exists env(QKNOBS)]} { eval $env(QKNOBS) }
for {set i 0} {$i < $n} {incr i} {
  $ns queue-limit $s($i) $r1 64
  $ns queue-limit $r1 $s($i) 64
  $ns queue-limit $r2 $d($i) 64
  $ns queue-limit $d($i) $r2 64
}
set q [[$ns link $r1 $r2] queue]
if {$qtype == "DRR"} {
  $q set buckets_ 64
  $q set blimit_ 65536
  $q set quantum_ 1000
  $q set mask_ 0
}
set udp [new Agent/UDP]
$ns attach-agent $s(0) $udp
set null [new Agent/LossMonitor]
$ns attach-agent $d(0) $null
$ns connect $udp $null
$udp set fid_ 0
set cbr [new Application/Traffic/CBR]
$cbr attach-agent $udp
$cbr set packetSize_ $usize
$cbr set rate_ 10Mb
$cbr set random_ $rnd
$ns at 0.0 "$cbr start"
set rv [new RandomVariable/Uniform]
$rv set min_ 0
$rv set max_ 1
for {set i 1} {$i < $n} {incr i} {
  set tcp($i) [new $tcpclass]
  $tcp($i) set fid_ $i
  set sink($i) [new Agent/TCPSink]
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [$rv value] "$ftp($i) start"
}
proc finish {} {
  global tcp n null qtype rnd seed dur
  set sum 0
  set l ""
  for {set i 1} {$i < $n} {incr i} {
    set a [$tcp($i) set ack_]
    set sum [expr $sum + $a]
    lappend l $a
  }
  puts "RESULT $qtype random=$rnd seed=$seed dur=$dur tcpmean=[expr $sum/19.0] udp=[$null set npkts_] udplost=[$null set nlost_] flows=$l"
  exit 0
}
$ns at $dur "finish"
$ns run
