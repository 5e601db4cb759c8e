// cclab-ns3: runs one cclab plan in ns-3 (3.37) and prints per-flow and
// per-link series. Package backend/ns3 writes the plan file this program
// reads (its Export), builds the program against the system's ns-3 and turns
// its output into cclab's metrics (docs/ns3.md). Every choice of model is made
// on the Go side and arrives here as ns-3 type names and attribute values, so
// this program only builds what it is told.
//
// Plan file: one record per line, space-separated key=value tokens:
//   run duration=S seed=N interval=S routers=N
//   hop id=N dir=0|1 span=N rate=BPS delay=S qtype=device|TYPEID qlimit=SIZE
//       [q.ATTR=V ...] [loss=bernoulli p=P | loss=hashed p=P key=K | loss=ge p=P r=R h=H k=K]
//   flow id=N from=ROUTER to=ROUTER arate=BPS adelay=S cc=TYPEID [cc.ATTR=V ...]
//       rec=TYPEID [rec.ATTR=V ...] [s.ATTR=V ...] [r.ATTR=V ...]
//       xfer=IDLE/DUR/BYTES[,IDLE/DUR/BYTES...]   (DUR<0: no time limit; BYTES 0: unlimited)
// Output lines (times in seconds, sizes in bytes):
//   F t flow delivered cwnd ssthresh srtt retransmits recoveries rtos sent
//   L t hop qlen qdrops lossdrops txpackets txbytes
// With CCLAB_NS3_TRACE=FILE in the environment, every sender event is also
// written to FILE, one line each (for comparisons with cclab's qlog):
//   t flow cwnd|ssthresh|state|rto|retx|ack VALUE
// (state: ns-3's TcpCongState_t number; rto: seconds; retx: the sequence
// number retransmitted, relative to the ISN; ack: the cumulative ACK).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

using Record = std::map<std::string, std::string>;

[[noreturn]] void
Fail(const std::string& msg)
{
    std::cerr << "cclab-ns3: " << msg << std::endl;
    std::exit(2);
}

std::string
Get(const Record& r, const std::string& k)
{
    auto it = r.find(k);
    if (it == r.end())
    {
        Fail("plan record lacks " + k);
    }
    return it->second;
}

double
Num(const Record& r, const std::string& k)
{
    return std::stod(Get(r, k));
}

// Attrs returns the "prefix.NAME=V" tokens of r as NAME -> V.
std::vector<std::pair<std::string, std::string>>
Attrs(const Record& r, const std::string& prefix)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& kv : r)
    {
        if (kv.first.rfind(prefix + ".", 0) == 0)
        {
            out.emplace_back(kv.first.substr(prefix.size() + 1), kv.second);
        }
    }
    return out;
}

void
SetAttrs(Ptr<Object> o, const Record& r, const std::string& prefix)
{
    for (const auto& a : Attrs(r, prefix))
    {
        if (!o->SetAttributeFailSafe(a.first, StringValue(a.second)))
        {
            Fail("attribute " + a.first + "=" + a.second + " rejected by " +
                 o->GetInstanceTypeId().GetName());
        }
    }
}

// LossIndexTag carries a packet's position n (0, 1, 2, ...) among the packets
// offered to a hop's device (its MacTx trace, before the queue), the count
// cclab's loss stage keeps before its queue; the hop's hashed LossModel at the
// far end reads it. Each hop replaces the tag of the previous one.
class LossIndexTag : public Tag
{
  public:
    uint64_t n = 0;

    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("cclab::LossIndexTag").SetParent<Tag>().AddConstructor<LossIndexTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 8;
    }

    void Serialize(TagBuffer b) const override
    {
        b.WriteU64(n);
    }

    void Deserialize(TagBuffer b) override
    {
        n = b.ReadU64();
    }

    void Print(std::ostream& os) const override
    {
        os << "n=" << n;
    }
};

// HashedLost is link.HashedLost: the n-th packet of a hashed loss stage
// with this key is lost iff the top 53 bits of SplitMix64(key + n*golden)
// (Steele, Lea & Flood, OOPSLA 2014), as a fraction of 2^53, are below p.
bool
HashedLost(uint64_t key, uint64_t n, double p)
{
    uint64_t z = key + n * 0x9e3779b97f4a7c15ULL + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return double(z >> 11) * (1.0 / 9007199254740992.0) < p;
}

// LossModel is cclab's link loss stage (link/loss.go): Bernoulli, hashed
// (the packet's LossIndexTag decides, HashedLost), or the Gilbert-Elliott
// model with netem's convention (the loss draw uses the state the packet
// finds; the transition applies to the next packet).
class LossModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("cclab::LossModel").SetParent<ErrorModel>().AddConstructor<LossModel>();
        return tid;
    }

    bool ge = false, hashed = false;
    uint64_t key = 0;
    double p = 0, r = 1, h = 0, k = 1;
    bool bad = false;
    Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();

  private:
    bool DoCorrupt(Ptr<Packet> pkt) override
    {
        if (hashed)
        {
            LossIndexTag t;
            if (!pkt->PeekPacketTag(t))
            {
                Fail("hashed loss: a packet without its index tag");
            }
            return HashedLost(key, t.n, p);
        }
        if (!ge)
        {
            return p > 0 && u->GetValue() < p;
        }
        bool lost;
        if (bad)
        {
            lost = u->GetValue() >= h;
            if (u->GetValue() < r)
            {
                bad = false;
            }
        }
        else
        {
            lost = u->GetValue() >= k;
            if (u->GetValue() < p)
            {
                bad = true;
            }
        }
        return lost;
    }

    void DoReset() override
    {
        bad = false;
    }
};

// Hop is one direction of one hop: its device and what measures it.
struct Hop
{
    int id = 0;
    Ptr<PointToPointNetDevice> dev; // transmitting device
    Ptr<QueueDisc> qdisc;           // nil: the device queue is the hop's queue
    uint64_t lossDrops = 0, txPackets = 0, txBytes = 0;
};

struct Transfer
{
    double idle = 0, dur = -1;
    uint64_t bytes = 0;
};

// Flow is one TCP flow's sender and its measures.
struct Flow
{
    int id = 0;
    Record rec;
    Ptr<Node> src, dst;
    Address sinkAddr;
    Ptr<TcpSocketBase> sock;
    std::vector<Transfer> xfers;
    size_t next = 0;
    bool on = false;
    double onEnd = 0;
    uint64_t toWrite = 0; // bytes left to write in a sized ON period
    bool sized = false;
    uint64_t delivered = 0, retx = 0, recoveries = 0, rtos = 0, sent = 0;
    uint32_t highSent = 0; // highest sequence sent + 1, relative to the ISN
    bool haveHigh = false;
    double srtt = 0, cwnd = 0, ssthresh = 0;
};

std::vector<Hop> g_hops;
FILE* g_trace = nullptr; // CCLAB_NS3_TRACE, or none

void
Trace(const Flow* f, const char* kind, double v)
{
    if (g_trace)
    {
        std::fprintf(g_trace,
                     "%.6f %d %s %.6f\n",
                     Simulator::Now().GetSeconds(),
                     f->id,
                     kind,
                     v);
    }
}
std::vector<Flow*> g_flows;
uint32_t g_bufSize = 1 << 20;

void Fill(Flow* f);

void
StartNext(Flow* f)
{
    if (f->next >= f->xfers.size())
    {
        f->on = false;
        return;
    }
    const Transfer& t = f->xfers[f->next++];
    Simulator::Schedule(Seconds(t.idle), [f, t]() {
        f->on = true;
        f->sized = t.bytes > 0;
        f->toWrite = t.bytes;
        f->onEnd = t.dur < 0 ? 1e18 : Simulator::Now().GetSeconds() + t.dur;
        if (t.dur >= 0)
        {
            Simulator::Schedule(Seconds(t.dur), [f]() {
                if (f->on && !f->sized)
                {
                    f->on = false;
                    StartNext(f);
                }
            });
        }
        Fill(f);
    });
}

// Fill writes what the current ON period still offers into the socket.
void
Fill(Flow* f)
{
    if (!f->on)
    {
        return;
    }
    if (f->sized && f->toWrite == 0)
    {
        // The ON period ends when its bytes are all acknowledged.
        if (f->sock->GetTxAvailable() >= g_bufSize)
        {
            f->on = false;
            StartNext(f);
        }
        return;
    }
    while (f->sock->GetTxAvailable() > 0)
    {
        uint32_t n = std::min<uint32_t>(f->sock->GetTxAvailable(), 65536);
        if (f->sized)
        {
            n = std::min<uint64_t>(n, f->toWrite);
        }
        int w = f->sock->Send(Create<Packet>(n), 0);
        if (w <= 0)
        {
            break;
        }
        if (f->sized)
        {
            f->toWrite -= w;
            if (f->toWrite == 0)
            {
                break;
            }
        }
    }
}

void
OnTx(Flow* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t len = p->GetSize();
    if (len == 0)
    {
        return;
    }
    f->sent++;
    uint32_t seq = h.GetSequenceNumber().GetValue();
    uint32_t end = seq + len;
    if (!f->haveHigh)
    {
        f->haveHigh = true;
        f->highSent = end;
        return;
    }
    if (int32_t(end - f->highSent) > 0)
    {
        if (int32_t(seq - f->highSent) < 0)
        {
            f->retx++; // partly new: count as a retransmission, as it resends bytes
        }
        f->highSent = end;
    }
    else
    {
        f->retx++;
        Trace(f, "retx", seq);
    }
}

void
OnCongState(Flow* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    Trace(f, "state", now);
    if (now == TcpSocketState::CA_RECOVERY)
    {
        f->recoveries++;
    }
}

// OnRto counts retransmission timeouts: TcpSocketBase::ReTxTimeout doubles
// m_rto (at most to 60 s) each time the timer fires for data, also when the
// socket is already in CA_LOSS (a lost retransmission after a timeout),
// which the CongState trace does not show again; every other change of
// m_rto is a recomputation from the RTT estimate (at least MinRto).
void
OnRto(Flow* f, Time old, Time now)
{
    Trace(f, "rto", now.GetSeconds());
    if (old.IsStrictlyPositive() && now > old &&
        (now == old + old || (now == Seconds(60) && old + old > now)))
    {
        f->rtos++;
    }
}

void
OnRtt(Flow* f, Time, Time rtt)
{
    // RFC 6298 §2 smoothing (alpha 1/8), as ns-3's RttMeanDeviation.
    double r = rtt.GetSeconds();
    Trace(f, "rtt", r);
    if (r <= 0)
    {
        return;
    }
    f->srtt = f->srtt == 0 ? r : f->srtt + (r - f->srtt) / 8;
}

void
StartFlow(Flow* f)
{
    Ptr<Socket> s = Socket::CreateSocket(f->src, TcpSocketFactory::GetTypeId());
    f->sock = DynamicCast<TcpSocketBase>(s);
    SetAttrs(f->sock, f->rec, "s");
    UintegerValue sb;
    f->sock->GetAttribute("SndBufSize", sb);
    g_bufSize = sb.Get();
    ObjectFactory cc;
    cc.SetTypeId(Get(f->rec, "cc"));
    for (const auto& a : Attrs(f->rec, "cc"))
    {
        cc.Set(a.first, StringValue(a.second));
    }
    f->sock->SetCongestionControlAlgorithm(cc.Create<TcpCongestionOps>());
    ObjectFactory rec;
    rec.SetTypeId(Get(f->rec, "rec"));
    for (const auto& a : Attrs(f->rec, "rec"))
    {
        rec.Set(a.first, StringValue(a.second));
    }
    f->sock->SetRecoveryAlgorithm(rec.Create<TcpRecoveryOps>());
    f->sock->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    f->sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
    f->sock->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnRtt, f));
    f->sock->TraceConnectWithoutContext(
        "CongestionWindow",
        MakeBoundCallback(+[](Flow* fl, uint32_t, uint32_t v) {
            fl->cwnd = v;
            Trace(fl, "cwnd", v);
        },
                          f));
    f->sock->TraceConnectWithoutContext(
        "SlowStartThreshold",
        MakeBoundCallback(+[](Flow* fl, uint32_t, uint32_t v) {
            fl->ssthresh = v;
            Trace(fl, "ssthresh", v);
        },
                          f));
    f->sock->TraceConnectWithoutContext(
        "RTO",
        MakeBoundCallback(&OnRto, f));
    if (g_trace)
    {
        f->sock->TraceConnectWithoutContext(
            "PacingRate",
            MakeBoundCallback(
                +[](Flow* fl, DataRate, DataRate v) { Trace(fl, "pacing", v.GetBitRate()); },
                f));
        f->sock->TraceConnectWithoutContext(
            "BytesInFlight",
            MakeBoundCallback(+[](Flow* fl, uint32_t, uint32_t v) { Trace(fl, "inflight", v); },
                              f));
    }
    f->sock->TraceConnectWithoutContext(
        "HighestRxAck",
        MakeBoundCallback(+[](Flow* fl, SequenceNumber32, SequenceNumber32 v) {
            Trace(fl, "ack", v.GetValue());
        },
                          f));
    f->sock->Bind();
    f->sock->SetConnectCallback(MakeBoundCallback(+[](Flow* fl, Ptr<Socket>) { StartNext(fl); }, f),
                                MakeBoundCallback(+[](Flow* fl, Ptr<Socket>) {
                                    Fail("flow " + std::to_string(fl->id) + ": connect failed");
                                },
                                                  f));
    f->sock->SetSendCallback(MakeBoundCallback(+[](Flow* fl, Ptr<Socket>, uint32_t) { Fill(fl); }, f));
    f->sock->Connect(f->sinkAddr);
}

void
StartSink(Flow* f, uint16_t port)
{
    Ptr<Socket> s = Socket::CreateSocket(f->dst, TcpSocketFactory::GetTypeId());
    SetAttrs(s, f->rec, "r");
    s->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    s->Listen();
    s->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                         MakeBoundCallback(+[](Flow* fl, Ptr<Socket> c, const Address&) {
                             c->SetRecvCallback(MakeBoundCallback(
                                 +[](Flow* fl2, Ptr<Socket> sk) {
                                     Ptr<Packet> p;
                                     while ((p = sk->Recv()) && p->GetSize() > 0)
                                     {
                                         fl2->delivered += p->GetSize();
                                     }
                                 },
                                 fl));
                         },
                                           f));
}

void
Sample(double interval, double end)
{
    double t = Simulator::Now().GetSeconds();
    for (Flow* f : g_flows)
    {
        std::printf("F %.6f %d %llu %.0f %.0f %.6f %llu %llu %llu %llu\n",
                    t,
                    f->id,
                    (unsigned long long)f->delivered,
                    f->cwnd,
                    f->ssthresh,
                    f->srtt,
                    (unsigned long long)f->retx,
                    (unsigned long long)f->recoveries,
                    (unsigned long long)f->rtos,
                    (unsigned long long)f->sent);
    }
    for (Hop& h : g_hops)
    {
        Ptr<Queue<Packet>> q = h.dev->GetQueue();
        uint64_t qlen = q->GetNPackets();
        uint64_t qdrops = q->GetTotalDroppedPackets();
        if (h.qdisc)
        {
            qlen += h.qdisc->GetNPackets();
            qdrops += h.qdisc->GetStats().nTotalDroppedPackets;
        }
        std::printf("L %.6f %d %llu %llu %llu %llu %llu\n",
                    t,
                    h.id,
                    (unsigned long long)qlen,
                    (unsigned long long)qdrops,
                    (unsigned long long)h.lossDrops,
                    (unsigned long long)h.txPackets,
                    (unsigned long long)h.txBytes);
    }
    if (t + interval <= end + 1e-9)
    {
        Simulator::Schedule(Seconds(interval), &Sample, interval, end);
    }
}

std::vector<Record>
ReadPlan(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        Fail("cannot read plan " + path);
    }
    std::vector<Record> out;
    std::string line;
    while (std::getline(in, line))
    {
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::istringstream ss(line);
        Record r;
        ss >> r["_"];
        std::string tok;
        while (ss >> tok)
        {
            auto eq = tok.find('=');
            if (eq == std::string::npos)
            {
                Fail("plan token without '=': " + tok);
            }
            r[tok.substr(0, eq)] = tok.substr(eq + 1);
        }
        out.push_back(r);
    }
    return out;
}

std::vector<Transfer>
ParseXfers(const std::string& s)
{
    std::vector<Transfer> out;
    std::istringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        Transfer t;
        if (std::sscanf(item.c_str(), "%lf/%lf/%llu", &t.idle, &t.dur, (unsigned long long*)&t.bytes) != 3)
        {
            Fail("bad transfer " + item);
        }
        out.push_back(t);
    }
    return out;
}

Ptr<PointToPointNetDevice>
P2P(NetDeviceContainer& d, int i)
{
    return DynamicCast<PointToPointNetDevice>(d.Get(i));
}

} // namespace

int
main(int argc, char* argv[])
{
    if (argc != 2)
    {
        Fail("usage: cclab-ns3 PLANFILE");
    }
    std::vector<Record> plan = ReadPlan(argv[1]);
    Record run;
    std::map<int, Record> hops; // by span*2+dir
    std::vector<Record> flows;
    for (const Record& r : plan)
    {
        const std::string& kind = r.at("_");
        if (kind == "run")
        {
            run = r;
        }
        else if (kind == "hop")
        {
            hops[int(Num(r, "span")) * 2 + int(Num(r, "dir"))] = r;
        }
        else if (kind == "flow")
        {
            flows.push_back(r);
        }
        else
        {
            Fail("unknown plan record " + kind);
        }
    }
    if (run.empty())
    {
        Fail("plan has no run record");
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(uint64_t(Num(run, "seed")));
    double duration = Num(run, "duration");
    int nRouters = int(Num(run, "routers"));

    NodeContainer routers;
    routers.Create(nRouters);
    InternetStackHelper stack;
    stack.Install(routers);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.255.0");
    TrafficControlHelper noTc;

    struct Pending
    {
        Ptr<PointToPointNetDevice> dev;
        Record rec;
    };
    std::vector<Pending> hopDevs;
    for (int span = 0; span + 1 < nRouters; span++)
    {
        auto fw = hops.find(span * 2);
        auto rv = hops.find(span * 2 + 1);
        if (fw == hops.end() || rv == hops.end())
        {
            Fail("hop " + std::to_string(span) + " lacks a direction");
        }
        PointToPointHelper p2p;
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(Num(fw->second, "delay"))));
        NetDeviceContainer d = p2p.Install(routers.Get(span), routers.Get(span + 1));
        addr.Assign(d);
        addr.NewNetwork();
        noTc.Uninstall(d);
        hopDevs.push_back({P2P(d, 0), fw->second});
        hopDevs.push_back({P2P(d, 1), rv->second});
    }
    for (auto& hd : hopDevs)
    {
        const Record& r = hd.rec;
        Hop h;
        h.id = int(Num(r, "id"));
        h.dev = hd.dev;
        h.dev->SetDataRate(DataRate(uint64_t(Num(r, "rate"))));
        std::string qtype = Get(r, "qtype");
        if (qtype == "device")
        {
            h.dev->GetQueue()->SetMaxSize(QueueSize(Get(r, "qlimit")));
        }
        else
        {
            h.dev->GetQueue()->SetMaxSize(QueueSize("1p"));
            TrafficControlHelper tch;
            tch.SetRootQueueDisc(qtype);
            QueueDiscContainer qc = tch.Install(NetDeviceContainer(h.dev));
            h.qdisc = qc.Get(0);
            SetAttrs(h.qdisc, r, "q");
        }
        auto loss = r.find("loss");
        Ptr<PointToPointNetDevice> peer = DynamicCast<PointToPointNetDevice>(
            h.dev->GetChannel()->GetDevice(h.dev->GetChannel()->GetDevice(0) == h.dev ? 1 : 0));
        if (loss != r.end())
        {
            Ptr<LossModel> em = CreateObject<LossModel>();
            em->ge = loss->second == "ge";
            em->hashed = loss->second == "hashed";
            em->p = Num(r, "p");
            if (em->hashed)
            {
                if (qtype != "device")
                {
                    Fail("hashed loss needs the device queue");
                }
                em->key = std::strtoull(Get(r, "key").c_str(), nullptr, 10);
                h.dev->TraceConnectWithoutContext(
                    "MacTx",
                    MakeBoundCallback(
                        +[](uint64_t* next, Ptr<const Packet> p) {
                            LossIndexTag t;
                            Packet* q = const_cast<Packet*>(PeekPointer(p));
                            q->RemovePacketTag(t);
                            t.n = (*next)++;
                            q->AddPacketTag(t);
                        },
                        new uint64_t(0)));
            }
            if (em->ge)
            {
                em->r = Num(r, "r");
                em->h = Num(r, "h");
                em->k = Num(r, "k");
            }
            em->u->SetStream(1000 + h.id);
            peer->SetReceiveErrorModel(em);
        }
        g_hops.push_back(h);
    }
    for (Hop& h : g_hops)
    {
        Hop* hp = &h;
        Ptr<PointToPointNetDevice> peer = DynamicCast<PointToPointNetDevice>(
            h.dev->GetChannel()->GetDevice(h.dev->GetChannel()->GetDevice(0) == h.dev ? 1 : 0));
        peer->TraceConnectWithoutContext("PhyRxDrop",
                                         MakeBoundCallback(+[](Hop* x, Ptr<const Packet>) { x->lossDrops++; }, hp));
        h.dev->TraceConnectWithoutContext("PhyTxEnd",
                                          MakeBoundCallback(
                                              +[](Hop* x, Ptr<const Packet> p) {
                                                  x->txPackets++;
                                                  x->txBytes += p->GetSize();
                                              },
                                              hp));
    }

    uint16_t port = 5000;
    for (const Record& r : flows)
    {
        Flow* f = new Flow;
        f->id = int(Num(r, "id"));
        f->rec = r;
        f->xfers = ParseXfers(Get(r, "xfer"));
        NodeContainer ends;
        ends.Create(2);
        stack.Install(ends);
        f->src = ends.Get(0);
        f->dst = ends.Get(1);
        PointToPointHelper acc;
        acc.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(Num(r, "arate")))));
        acc.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("100000p")));
        acc.SetChannelAttribute("Delay", TimeValue(Seconds(Num(r, "adelay"))));
        NetDeviceContainer a = acc.Install(f->src, routers.Get(int(Num(r, "from"))));
        addr.Assign(a);
        addr.NewNetwork();
        noTc.Uninstall(a);
        acc.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
        NetDeviceContainer b = acc.Install(routers.Get(int(Num(r, "to"))), f->dst);
        Ipv4InterfaceContainer bi = addr.Assign(b);
        addr.NewNetwork();
        noTc.Uninstall(b);
        f->sinkAddr = InetSocketAddress(bi.GetAddress(1), port);
        StartSink(f, port);
        port++;
        g_flows.push_back(f);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    for (Flow* f : g_flows)
    {
        Simulator::Schedule(Seconds(Num(f->rec, "start")), &StartFlow, f);
    }
    if (const char* tf = std::getenv("CCLAB_NS3_TRACE"))
    {
        g_trace = std::fopen(tf, "w");
        if (!g_trace)
        {
            Fail(std::string("CCLAB_NS3_TRACE: cannot write ") + tf);
        }
    }
    double interval = Num(run, "interval");
    Simulator::Schedule(Seconds(interval), &Sample, interval, duration);
    Simulator::Stop(Seconds(duration) + NanoSeconds(1));
    Simulator::Run();
    Simulator::Destroy();
    if (g_trace)
    {
        std::fclose(g_trace);
    }
    return 0;
}
