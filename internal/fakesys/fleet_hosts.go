package fakesys

import "fmt"

// fleetHosts is the corpus behind Shapes, in its order. Where a
// distance table or CPU numbering was copied from a real machine the
// host's comment says from where; the rest follows how the platform's
// firmware and kernel lay things out.
func fleetHosts() []host {
	return []host{
		nps2Bug(), twoSocketTwoNICs(),
		sprSNCOff(), icxSNC2(), sprSNC4(),
		epycNPS1(), epycNPS2(), epycNPS4(), epycL3AsNUMA(),
		e7FourSocket(), eightSocket(),
		power9AC922(), power10SMT8(),
		kunpeng920(), altraQuadrant(),
		gh200Quad(), xeonMaxFlat(), cxlExpander(),
		azureMANA(), kvmVirtio(),
		scaleHost(),
	}
}

// grid numbers the CPUs of sockets × cores × smt threads. x86 firmware
// lists the first thread of every core, socket by socket, then the
// second threads in the same order, so CPU c's sibling is c +
// sockets*cores; POWER numbers a core's threads consecutively.
type grid struct {
	sockets, cores, smt int // cores per socket
	power               bool
}

// place gives every CPU its node, package (the socket), core and LLC:
// node(s, k) is the node id of core k of socket s, llc(s, k, t) a
// number naming the LLC its thread t uses.
func (g grid) place(node func(s, k int) int, llc func(s, k, t int) int) []hostCPU {
	out := make([]hostCPU, g.sockets*g.cores*g.smt)
	for s := range g.sockets {
		for k := range g.cores {
			core := s*g.cores + k
			for t := range g.smt {
				c := t*g.sockets*g.cores + core
				if g.power {
					c = core*g.smt + t
				}
				out[c] = hostCPU{node: node(s, k), pkg: s, core: core, llc: llc(s, k, t)}
			}
		}
	}
	return out
}

// perSocket splits each socket of cores cores into nps nodes of
// consecutive cores, numbered socket by socket (NPS, SNC).
func perSocket(nps, cores int) func(s, k int) int {
	return func(s, k int) int { return s*nps + k/(cores/nps) }
}

// llcEvery makes every n consecutive cores of a socket of cores cores
// share an LLC (a CCD, a core pair); n = cores gives one per socket.
func llcEvery(n, cores int) func(s, k, t int) int {
	return func(s, k, t int) int { return (s*cores + k) / n }
}

// nodesOf pairs node ids with the rows of their distance table.
func nodesOf(ids []int, dist [][]int) []hostNode {
	out := make([]hostNode, len(ids))
	for i, id := range ids {
		out[i] = hostNode{id: id, dist: dist[i]}
	}
	return out
}

// seq is 0..n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// distFunc builds the table of the nodes ids from d(i, j), the distance
// between the i-th and j-th of them (10 on the diagonal is d's job).
func distFunc(ids []int, d func(i, j int) int) [][]int {
	rows := make([][]int, len(ids))
	for i := range ids {
		rows[i] = make([]int, len(ids))
		for j := range ids {
			rows[i][j] = d(i, j)
		}
	}
	return rows
}

// nic is a one-port NIC.
func nic(driver, bdf string, node int, ifname string, queues int) hostDev {
	return hostDev{kind: devNIC, driver: driver, bdf: bdf, node: node, ifname: ifname, queues: queues}
}

// dualPort is a two-port NIC: functions 0 and 1 of one device, on one
// node, each with its interface and queues.
func dualPort(driver, bus string, node int, if0, if1 string, queues int) []hostDev {
	return []hostDev{nic(driver, bus+".0", node, if0, queues), nic(driver, bus+".1", node, if1, queues)}
}

// nvme is drive nvme<index>: an admin vector and queues managed I/O
// queue vectors.
func nvme(index int, bdf string, node, queues int) hostDev {
	return hostDev{kind: devNVMe, driver: "nvme", bdf: bdf, node: node, queues: queues, index: index}
}

// gpu is a GPU with vectors IRQs, each named after its driver as
// nvidia and amdgpu name theirs.
func gpu(driver, bdf string, node, vectors int) hostDev {
	return hostDev{kind: devGPU, driver: driver, bdf: bdf, node: node, queues: vectors}
}

// devices flattens single devices and dual-port pairs.
func devices(ds ...any) []hostDev {
	var out []hostDev
	for _, d := range ds {
		switch d := d.(type) {
		case hostDev:
			out = append(out, d)
		case []hostDev:
			out = append(out, d...)
		}
	}
	return out
}

// x86 metal hosts use interrupt remapping and have the IO-APIC IRQs.
const x86Chip = "IR-PCI-MSIX-"

// nps2Bug is the host of the bug report, kept exactly as reported.
func nps2Bug() host {
	g := grid{sockets: 2, cores: 32, smt: 1}
	return host{
		name: "nps2-4x16-mlx5",
		what: "the bug report's host: 2-socket AMD EPYC in NPS2, 4 nodes of 16 CPUs without SMT (10 local, 12 within a socket, 32 across), one 32-queue mlx5 NIC per node (eth0-eth3 on nodes 0-3); L3 per 8-core CCD",
		cpus: g.place(perSocket(2, 32), llcEvery(8, 32)), nodes: nodesOf(seq(4), TieredDistances(4, 32, Tier{Size: 2, Distance: 12})),
		chip: x86Chip, legacy: true,
		devs: []hostDev{
			nic("mlx5_core", "0000:01:00.0", 0, "eth0", 32), nic("mlx5_core", "0000:41:00.0", 1, "eth1", 32),
			nic("mlx5_core", "0000:81:00.0", 2, "eth2", 32), nic("mlx5_core", "0000:c1:00.0", 3, "eth3", 32),
		},
	}
}

func twoSocketTwoNICs() host {
	g := grid{sockets: 2, cores: 16, smt: 2}
	return host{
		name:   "2s-32-two-nics",
		what:   "2-socket Intel Xeon, 16 cores SMT2 a socket (32 CPUs), one node per socket (10/21), L3 per socket, two 32-queue NICs per socket: E810 (ice) on socket 0, ConnectX (mlx5) on socket 1; CPU 0 and its sibling banned",
		banned: "0,32",
		cpus:   g.place(perSocket(1, 16), llcEvery(16, 16)), nodes: nodesOf(seq(2), TieredDistances(2, 21)),
		chip: x86Chip, legacy: true,
		devs: []hostDev{
			nic("ice", "0000:17:00.0", 0, "ens1f0", 32), nic("ice", "0000:31:00.0", 0, "ens2f0", 32),
			nic("mlx5_core", "0000:98:00.0", 1, "ens4f0np0", 32), nic("mlx5_core", "0000:b1:00.0", 1, "ens5f0np0", 32),
		},
	}
}

func sprSNCOff() host {
	g := grid{sockets: 2, cores: 32, smt: 2}
	return host{
		name:   "spr-2s-snc-off",
		what:   "2-socket Xeon Gold 6430 (Sapphire Rapids, 32 cores SMT2 a socket, 128 CPUs), SNC off: 2 nodes (10/21), L3 per socket; dual-port E810 (ice) and two NVMe on socket 0, ConnectX-7 (mlx5) and NVMe on socket 1",
		banned: "0,64",
		cpus:   g.place(perSocket(1, 32), llcEvery(32, 32)), nodes: nodesOf(seq(2), TieredDistances(2, 21)),
		chip: x86Chip, legacy: true,
		devs: devices(
			dualPort("ice", "0000:38:00", 0, "ens1f0", "ens1f1", 64),
			nvme(0, "0000:3b:00.0", 0, 64), nvme(1, "0000:3c:00.0", 0, 64),
			nic("mlx5_core", "0000:a8:00.0", 1, "ens6np0", 63),
			nvme(2, "0000:d8:00.0", 1, 64),
		),
	}
}

// icxSNC2 has the sysfs L3 of the whole socket: cacheinfo comes from
// CPUID leaf 4, which knows nothing of SNC (hwloc shows one L3 per
// package on SNC machines).
func icxSNC2() host {
	g := grid{sockets: 2, cores: 40, smt: 2}
	return host{
		name:   "icx-2s-snc2",
		what:   "2-socket Xeon Platinum 8380 (40 cores SMT2 a socket, 160 CPUs) in SNC2: 4 nodes of 20 cores (10 local, 11 within a socket, 21 across), L3 per socket as sysfs shows it; dual-port X710 (i40e), ConnectX-6 (mlx5) and NVMe on three different nodes",
		banned: "0-1,80-81",
		cpus:   g.place(perSocket(2, 40), llcEvery(40, 40)), nodes: nodesOf(seq(4), TieredDistances(4, 21, Tier{Size: 2, Distance: 11})),
		chip: x86Chip, legacy: true,
		devs: devices(
			dualPort("i40e", "0000:31:00", 1, "ens2f0", "ens2f1", 40),
			nic("mlx5_core", "0000:98:00.0", 2, "ens5f0np0", 48),
			nvme(0, "0000:e3:00.0", 3, 64),
		),
	}
}

// sprSNC4 numbers CPUs as the SNC4 machine of gramine PR #530 does
// (node 1 starts at CPU 14, CPU 0's sibling is 112) and has the 10/12/21
// distances of unified-memory-framework issue #1289's SNC4 table.
func sprSNC4() host {
	g := grid{sockets: 2, cores: 56, smt: 2}
	return host{
		name: "spr-2s-snc4",
		what: "2-socket Xeon Platinum 8480+ (224 CPUs) in SNC4: 8 nodes of 14 cores (10 local, 12 within a socket, 21 across), L3 per socket as sysfs shows it; dual-port ConnectX-6 Dx (mlx5) on node 1, E810 (ice) on node 6, two GPUs, NVMe on node 5",
		cpus: g.place(perSocket(4, 56), llcEvery(56, 56)), nodes: nodesOf(seq(8), TieredDistances(8, 21, Tier{Size: 4, Distance: 12})),
		chip: x86Chip, legacy: true,
		devs: devices(
			dualPort("mlx5_core", "0000:4b:00", 1, "ens2f0np0", "ens2f1np1", 63),
			nic("ice", "0000:b1:00.0", 6, "ens7f0", 64),
			gpu("nvidia", "0000:18:00.0", 0, 2), gpu("nvidia", "0000:9a:00.0", 4, 2),
			nvme(0, "0000:a9:00.0", 5, 64),
		),
	}
}

func epycNPS1() host {
	g := grid{sockets: 2, cores: 32, smt: 2}
	return host{
		name:   "epyc-2p-nps1",
		what:   "2-socket AMD EPYC 9354 (Zen4, 32 cores SMT2 a socket on 8 CCDs, 128 CPUs) in NPS1: 2 nodes (10/32), L3 per 4-core CCD (8 CPUs); dual-port BCM57508 (bnxt_en) and NVMe on node 0, ConnectX-6 (mlx5) and NVMe on node 1",
		banned: "0,64",
		cpus:   g.place(perSocket(1, 32), llcEvery(4, 32)), nodes: nodesOf(seq(2), TieredDistances(2, 32)),
		chip: x86Chip, legacy: true,
		devs: devices(
			dualPort("bnxt_en", "0000:41:00", 0, "ens1f0np0", "ens1f1np1", 64),
			nvme(0, "0000:01:00.0", 0, 64),
			nic("mlx5_core", "0000:c1:00.0", 1, "ens2np0", 64),
			nvme(1, "0000:81:00.0", 1, 64),
		),
	}
}

func epycNPS2() host {
	g := grid{sockets: 2, cores: 32, smt: 2}
	return host{
		name: "epyc-2p-nps2",
		what: "2-socket AMD EPYC 7513 (32 cores SMT2 a socket, 128 CPUs) in NPS2: 4 nodes of 16 cores (10 local, 12 within a socket, 32 across), L3 per 8-core CCD; dual-port ConnectX-6 (mlx5) on node 1, a 64-queue E810 (ice) on node 3's 32 CPUs, NVMe on node 0",
		cpus: g.place(perSocket(2, 32), llcEvery(8, 32)), nodes: nodesOf(seq(4), TieredDistances(4, 32, Tier{Size: 2, Distance: 12})),
		chip: x86Chip, legacy: true,
		devs: devices(
			dualPort("mlx5_core", "0000:41:00", 1, "ens2f0np0", "ens2f1np1", 32),
			nic("ice", "0000:c1:00.0", 3, "ens5f0", 64),
			nvme(0, "0000:01:00.0", 0, 64),
		),
	}
}

func epycNPS4() host {
	g := grid{sockets: 2, cores: 32, smt: 2}
	h := host{
		name:   "epyc-2p-nps4",
		what:   "2-socket AMD EPYC 7543 (Zen3, 32 cores SMT2 a socket on 8 CCDs, 128 CPUs) in NPS4: 8 nodes of 8 cores, 2 CCDs each (10 local, 12 within a socket, 32 across), L3 per 4-core CCD; a GPU server: four ConnectX-6 (mlx5) and four A100 GPUs, a pair on each of nodes 1, 3, 5, 7, two NVMe",
		banned: "0-1,64-65",
		cpus:   g.place(perSocket(4, 32), llcEvery(4, 32)), nodes: nodesOf(seq(8), TieredDistances(8, 32, Tier{Size: 4, Distance: 12})),
		chip: x86Chip, legacy: true,
	}
	for i, bus := range []string{"01", "41", "81", "c1"} {
		n := 2*i + 1
		h.devs = append(h.devs,
			nic("mlx5_core", fmt.Sprintf("0000:%s:00.0", bus), n, fmt.Sprintf("ens%dnp0", i+1), 32),
			gpu("nvidia", fmt.Sprintf("0000:%02x:00.0", 0x07+0x40*i), n, 2))
	}
	h.devs = append(h.devs, nvme(0, "0000:23:00.0", 0, 64), nvme(1, "0000:a3:00.0", 4, 64))
	return h
}

// epycL3AsNUMA is the mlx5e test machine of docs/kernel.md §1.6: node n
// is CPUs 8n-8n+7 and 128+8n-128+8n+7, 11 within a group of 4 nodes, 12
// within a socket, 32 across, and a NIC on node 14 with 127 completion
// vectors (the patch's 127 hints).
func epycL3AsNUMA() host {
	g := grid{sockets: 2, cores: 64, smt: 2}
	return host{
		name: "epyc-2p-l3numa",
		what: "2-socket AMD EPYC 7763 with L3-as-NUMA (256 CPUs): 16 nodes, each one 8-core CCD (10 local, 11 within a group of 4, 12 within a socket, 32 across); the mlx5e patch's 127-queue ConnectX (mlx5) on node 14 and a dual-port BCM57414 (bnxt_en) on node 3",
		cpus: g.place(perSocket(8, 64), llcEvery(8, 64)),
		nodes: nodesOf(seq(16), TieredDistances(16, 32,
			Tier{Size: 4, Distance: 11}, Tier{Size: 8, Distance: 12})),
		chip: x86Chip, legacy: true,
		devs: devices(
			nic("mlx5_core", "0000:e1:00.0", 14, "ens14np0", 127),
			dualPort("bnxt_en", "0000:41:00", 3, "ens3f0np0", "ens3f1np1", 16),
		),
	}
}

// e7FourSocket numbers its CPUs as the Xeon E7-4870 host of Red Hat's
// performance tuning guide (numactl --hardware): round robin over the
// sockets, node 0 holding 0 4 8 …, node 1 2 6 10 …, node 2 1 5 9 …,
// node 3 3 7 11 ….
func e7FourSocket() host {
	h := host{
		name:   "e7-4s-interleaved",
		what:   "4-socket Xeon E7-4870 (10 cores a socket, HT off, 40 CPUs) numbered round robin over the sockets (node 0: 0,4,8,…; node 1: 2,6,…; node 2: 1,5,…; node 3: 3,7,…), 10/21, L3 per socket; dual-port 82599 (ixgbe) on node 0, another on node 3",
		banned: "0",
		nodes:  nodesOf(seq(4), TieredDistances(4, 21)),
		chip:   x86Chip, legacy: true,
		devs: devices(
			dualPort("ixgbe", "0000:04:00", 0, "eth0", "eth1", 16),
			nic("ixgbe", "0000:c4:00.0", 3, "eth2", 16),
		),
	}
	socket := []int{0, 2, 1, 3}
	for c := range 40 {
		s := socket[c%4]
		h.cpus = append(h.cpus, hostCPU{node: s, pkg: s, core: c, llc: s})
	}
	return h
}

// eightSocket's distances follow its UPI links: with three links a
// socket, eight sockets are glued as a Wagner graph (a ring with links
// across), so a socket has three neighbours at 21 and four sockets two
// hops away at 31. Not a tree: 0-1 and 1-2 are 21, 0-2 is 31. The table
// is built from the link graph, not copied from a machine.
func eightSocket() host {
	g := grid{sockets: 8, cores: 16, smt: 2}
	ids := seq(8)
	return host{
		name:   "clx-8s-glueless",
		what:   "8-socket Xeon Platinum 8253 glueless (16 cores SMT2 a socket, 256 CPUs), a node per socket, UPI distances 10/21/31 that are no tree, L3 per socket; ConnectX-5 (mlx5) dual-port on socket 0, X710 (i40e) on 3, ConnectX-5 on 6, BCM57414 (bnxt_en) on 7, NVMe on 1",
		banned: "0,128",
		cpus:   g.place(perSocket(1, 16), llcEvery(16, 16)),
		nodes: nodesOf(ids, distFunc(ids, func(i, j int) int {
			switch (j - i + 8) % 8 {
			case 0:
				return 10
			case 1, 4, 7:
				return 21
			}
			return 31
		})),
		chip: x86Chip, legacy: true,
		devs: devices(
			dualPort("mlx5_core", "0000:17:00", 0, "ens1f0np0", "ens1f1np1", 64),
			nic("i40e", "0000:77:00.0", 3, "ens4f0", 48),
			nic("mlx5_core", "0000:d7:00.0", 6, "ens7f0np0", 64),
			nic("bnxt_en", "0000:f7:00.0", 7, "ens8f0np0", 32),
			nvme(0, "0000:37:00.0", 1, 64),
		),
	}
}

// power9AC922 follows hwloc's nvidiagpunumanodes test topology (an IBM
// 8335-GTW): chips numbered as nodes and packages 0 and 8, CPU 88
// starting chip 8, an L3 per pair of SMT4 cores, 40 between the chips,
// and the V100s' HBM as nodes 250-255, 80 from every other node.
func power9AC922() host {
	g := grid{sockets: 2, cores: 22, smt: 4, power: true}
	chip := []int{0, 8}
	cpus := g.place(func(s, k int) int { return chip[s] }, llcEvery(2, 22))
	for c := range cpus {
		cpus[c].pkg = chip[cpus[c].pkg]
	}
	ids := []int{0, 8, 250, 251, 252, 253, 254, 255}
	return host{
		name: "power9-ac922",
		what: "IBM AC922 (POWER9, PowerNV): 2 chips of 22 cores SMT4 (176 CPUs), a core's threads numbered consecutively, L3 per core pair, CPU nodes 0 and 8 (40 apart), six V100 GPUs whose HBM are CPU-less nodes 250-255 (80 from all); dual-port ConnectX-5 (mlx5) on chip 0, another on chip 8, NVMe",
		cpus: cpus,
		nodes: nodesOf(ids, distFunc(ids, func(i, j int) int {
			switch {
			case i == j:
				return 10
			case i < 2 && j < 2:
				return 40
			}
			return 80
		})),
		chip: "PCI-MSIX-",
		devs: devices(
			dualPort("mlx5_core", "0003:01:00", 0, "enP3p1s0f0", "enP3p1s0f1", 32),
			nic("mlx5_core", "0033:01:00.0", 8, "enP51p1s0f0", 32),
			gpu("nvidia", "0004:04:00.0", 0, 1), gpu("nvidia", "0004:05:00.0", 0, 1), gpu("nvidia", "0004:06:00.0", 0, 1),
			gpu("nvidia", "0035:03:00.0", 8, 1), gpu("nvidia", "0035:04:00.0", 8, 1), gpu("nvidia", "0035:05:00.0", 8, 1),
			nvme(0, "0030:01:00.0", 8, 32),
		),
	}
}

// power10SMT8 has the caches of a big core (two SMT4 small cores fused,
// whose threads interleave): sysfs lists threads 0,2,4,6 and 1,3,5,7 as
// sharing an L2 and L3 ("ibm,thread-groups"; powerpc cacheinfo reports
// the thread group since 5.12), so a CPU's LLC is narrower than its SMT
// siblings.
func power10SMT8() host {
	g := grid{sockets: 2, cores: 12, smt: 8, power: true}
	return host{
		name:  "power10-smt8",
		what:  "POWER10 LPAR, 2 chips of 12 cores SMT8 (192 CPUs), a core's threads numbered consecutively, nodes 0 and 1 (40 apart); each core's L3 is split by small core (threads 0,2,4,6 and 1,3,5,7), narrower than the SMT siblings; dual-port ConnectX-6 (mlx5) and NVMe on node 0, another ConnectX-6 on node 1",
		cpus:  g.place(perSocket(1, 12), func(s, k, t int) int { return 2*(s*12+k) + t%2 }),
		nodes: nodesOf(seq(2), TieredDistances(2, 40)),
		chip:  "PCI-MSIX-",
		devs: devices(
			dualPort("mlx5_core", "0181:70:00", 0, "enP385p112s0f0np0", "enP385p112s0f1np1", 32),
			nvme(0, "0183:70:00.0", 0, 48),
			nic("mlx5_core", "0582:60:00.0", 1, "enP1410p96s0np0", 32),
		),
	}
}

// kunpeng920 is hwloc's 128arm-2pa2n8cluster4co test topology (a Huawei
// XA320 V2): 2 packages of 2 nodes of 32 cores, CPUs numbered
// consecutively, an L3 per node, and its distance table, which no tier
// scheme gives (16 within a package, 25, 32 and 33 across).
func kunpeng920() host {
	h := host{
		name: "kunpeng920-2p",
		what: "Huawei Kunpeng 920 2P (Arm, no SMT, 128 CPUs): 4 nodes of 32 consecutive CPUs, 2 a package, L3 per node, distances 10 16 32 33 / 16 10 25 32 / 32 25 10 16 / 33 32 16 10; the on-board dual-port 25GE (hns3) on node 0, ConnectX-5 (mlx5) and NVMe on node 2",
		nodes: nodesOf(seq(4), [][]int{
			{10, 16, 32, 33},
			{16, 10, 25, 32},
			{32, 25, 10, 16},
			{33, 32, 16, 10},
		}),
		chip: "ITS-PCI-MSIX-",
		devs: devices(
			dualPort("hns3", "0000:7d:00", 0, "enp125s0f0", "enp125s0f1", 16),
			nic("mlx5_core", "0000:81:00.0", 2, "enp129s0f0np0", 32),
			nvme(0, "0000:84:00.0", 2, 32),
		),
	}
	for c := range 128 {
		n := c / 32
		h.cpus = append(h.cpus, hostCPU{node: n, pkg: n / 2, core: c, llc: n})
	}
	return h
}

// altraQuadrant's distances are those Ampere's firmware puts in the SLIT
// (edk2-platforms AmpereAltraPkg AcpiSlit.c): within a socket 10 plus
// the Manhattan distance of the quadrants on a 2x2 mesh, across 20 plus
// one for each end in the upper half. Its tree has no cache directory,
// as on firmware whose PPTT describes no caches.
func altraQuadrant() host {
	ids := seq(8)
	cpus := make([]hostCPU, 160)
	for c := range cpus {
		cpus[c] = hostCPU{node: c / 20, pkg: c / 80, core: c}
	}
	return host{
		name: "altra-2p-quadrant",
		what: "2-socket Ampere Altra Q80 (Arm, no SMT, 160 CPUs) in quadrant mode: 8 nodes of 20 cores, 11/12 within a socket by mesh distance, 20/21/22 across, no cache information in sysfs; dual-port ConnectX-6 (mlx5) on node 0, another on node 5, NVMe on node 6",
		cpus: cpus,
		nodes: nodesOf(ids, distFunc(ids, func(i, j int) int {
			a, b := i%4, j%4
			if i/4 == j/4 {
				return 10 + abs(a%2-b%2) + abs(a/2-b/2)
			}
			return 20 + a/2 + b/2
		})),
		noLLC: true,
		chip:  "ITS-PCI-MSIX-",
		devs: devices(
			dualPort("mlx5_core", "0004:01:00", 0, "enP4p1s0f0np0", "enP4p1s0f1np1", 40),
			nic("mlx5_core", "000d:01:00.0", 5, "enP13p1s0np0", 40),
			nvme(0, "000e:01:00.0", 6, 40),
		),
	}
}

func abs(x int) int { return max(x, -x) }

// gh200Quad has the node distance table numactl showed on a 4xGH200
// system (numactl issue #224): Grace nodes 0-3 40 apart, eight CPU-less
// nodes 4-35 per Hopper for its HBM and MIG partitions, 80 from their
// own Grace, 120 from the others, 255 between any two GPU nodes.
func gh200Quad() host {
	cpus := make([]hostCPU, 4*72)
	for c := range cpus {
		cpus[c] = hostCPU{node: c / 72, pkg: c / 72, core: c, llc: c / 72}
	}
	ids := seq(36)
	owner := func(n int) int { return (n - 4) / 8 } // the Grace of GPU node n
	h := host{
		name: "gh200-4p",
		what: "4x GH200 node (Arm Grace, 72 cores a chip, no SMT, 288 CPUs): Grace nodes 0-3 (40 apart), 32 CPU-less Hopper memory nodes 4-35 (80 from their Grace, 120 from the others, 255 between them), L3 per Grace; a ConnectX-7 (mlx5) and a Hopper GPU per Grace, NVMe on node 0",
		cpus: cpus,
		nodes: nodesOf(ids, distFunc(ids, func(i, j int) int {
			switch {
			case i == j:
				return 10
			case i < 4 && j < 4:
				return 40
			case i >= 4 && j >= 4:
				return 255
			case i < 4 && owner(j) == i, j < 4 && owner(i) == j:
				return 80
			}
			return 120
		})),
		chip: "ITS-PCI-MSIX-",
	}
	for g := range 4 {
		ifname := "enp1s0np0" // systemd names domain 0 without a P
		if g > 0 {
			ifname = fmt.Sprintf("enP%dp1s0np0", 0x10*g)
		}
		h.devs = append(h.devs,
			nic("mlx5_core", fmt.Sprintf("%04x:01:00.0", 0x10*g), g, ifname, 64),
			gpu("nvidia", fmt.Sprintf("%04x:01:00.0", 0x10*g+9), g, 4))
	}
	h.devs = append(h.devs, nvme(0, "0008:01:00.0", 0, 64))
	return h
}

// xeonMaxFlat has the distance table of an Aurora node's `numactl -H`
// (Argonne user guide): Xeon Max 9470C in flat mode, the HBM of each
// socket a CPU-less node 13 from its socket and 23 from the other.
func xeonMaxFlat() host {
	g := grid{sockets: 2, cores: 52, smt: 2}
	return host{
		name: "xeon-max-hbm-flat",
		what: "2-socket Xeon Max 9470C in HBM flat mode (52 cores SMT2 a socket, 208 CPUs): DDR nodes 0 and 1 (21 apart), each socket's HBM a CPU-less node (2, 3) at 13 from it and 23 from the other, L3 per socket; two ConnectX-7 (mlx5) and three Max GPUs (i915) per socket",
		cpus: g.place(perSocket(1, 52), llcEvery(52, 52)),
		nodes: nodesOf(seq(4), [][]int{
			{10, 21, 13, 23},
			{21, 10, 23, 13},
			{13, 23, 10, 23},
			{23, 13, 23, 10},
		}),
		chip: x86Chip, legacy: true,
		devs: devices(
			nic("mlx5_core", "0000:1b:00.0", 0, "ens1np0", 52), nic("mlx5_core", "0000:29:00.0", 0, "ens2np0", 52),
			nic("mlx5_core", "0000:9b:00.0", 1, "ens5np0", 52), nic("mlx5_core", "0000:a9:00.0", 1, "ens6np0", 52),
			gpu("i915", "0000:18:00.0", 0, 1), gpu("i915", "0000:42:00.0", 0, 1), gpu("i915", "0000:6c:00.0", 0, 1),
			gpu("i915", "0001:18:00.0", 1, 1), gpu("i915", "0001:42:00.0", 1, 1), gpu("i915", "0001:6c:00.0", 1, 1),
		),
	}
}

// cxlExpander's CXL memory nodes come from CEDT windows that the
// firmware's SLIT does not cover, so the kernel gives them the default
// REMOTE_DISTANCE (20) from everything: nearer than the other socket
// (21) though behind a CXL link. Node 4 is an ACPI Generic Initiator
// domain (SRAT type 5): no CPUs, no memory, a SmartNIC's numa_node.
func cxlExpander() host {
	g := grid{sockets: 2, cores: 32, smt: 2}
	return host{
		name:   "cxl-2s-expander",
		what:   "2-socket Xeon (32 cores SMT2 a socket, 128 CPUs) with a CXL memory expander per socket as CPU-less nodes 2 and 3 (20 from all: outside the SLIT) and a BlueField-2 (mlx5, dual-port) on node 4, a CPU-less Generic Initiator node 11 from socket 0; E810 (ice) on node 1, NVMe on node 0",
		banned: "0,64",
		cpus:   g.place(perSocket(1, 32), llcEvery(32, 32)),
		nodes: nodesOf(seq(5), [][]int{
			{10, 21, 20, 20, 11},
			{21, 10, 20, 20, 21},
			{20, 20, 10, 20, 20},
			{20, 20, 20, 10, 20},
			{11, 21, 20, 20, 10},
		}),
		chip: x86Chip, legacy: true,
		devs: devices(
			dualPort("mlx5_core", "0000:2a:00", 4, "ens3f0np0", "ens3f1np1", 32),
			nic("ice", "0000:ca:00.0", 1, "ens6f0", 32),
			nvme(0, "0000:3b:00.0", 0, 64),
		),
	}
}

// azureMANA is a Hyper-V guest: siblings are numbered next to each other,
// and MANA's vPCI domain names its VF interface (0x7870 is 30832).
func azureMANA() host {
	g := grid{sockets: 1, cores: 4, smt: 2, power: true}
	return host{
		name: "azure-mana-8vcpu",
		what: "Azure VM with 8 vCPUs (4 cores SMT2, siblings numbered adjacent), one node; two MANA NICs of 16 queues each, twice the vCPUs, and an 8-queue NVMe",
		cpus: g.place(perSocket(1, 4), llcEvery(4, 4)), nodes: nodesOf(seq(1), [][]int{{10}}),
		chip: "PCI-MSIX-",
		devs: []hostDev{
			nic("mana", "7870:00:00.0", 0, "enP30832s1", 16),
			nic("mana", "7871:00:00.0", 0, "enP30833s2", 16),
			nvme(0, "c05b:00:00.0", 0, 8),
		},
	}
}

func kvmVirtio() host {
	g := grid{sockets: 1, cores: 4, smt: 1}
	return host{
		name: "kvm-virtio-4vcpu",
		what: "KVM guest with 4 vCPUs, one node, devices without numa_node (-1): a virtio-net of 16 queue pairs (four times the vCPUs) and one of 8, a virtio-blk of 4 managed request queues",
		cpus: g.place(perSocket(1, 4), llcEvery(4, 4)), nodes: nodesOf(seq(1), [][]int{{10}}),
		chip: "PCI-MSIX-", legacy: true,
		devs: []hostDev{
			{kind: devNIC, driver: "virtio_net", bdf: "0000:00:03.0", node: -1, ifname: "eth0", queues: 16, index: 0},
			{kind: devVirtioBlk, driver: "virtio_blk", bdf: "0000:00:04.0", node: -1, queues: 4, index: 1},
			{kind: devNIC, driver: "virtio_net", bdf: "0000:00:05.0", node: -1, ifname: "eth1", queues: 8, index: 2},
		},
	}
}

// scaleHost is AddScaleHost's tree, described for the tests: 256 CPUs
// (CPU c's sibling c±128), node n the cores 32n..32n+31 and their
// siblings, two nodes a package, no cache directory, 64 mlx5 NICs of
// 128 completion vectors and no async vector.
func scaleHost() host {
	g := grid{sockets: 2, cores: ScaleCPUs / 4, smt: 2}
	per := ScaleCPUs / ScaleNodes / 2
	h := host{
		name:  "scale-256",
		what:  fmt.Sprintf("the benchmarks' scale host (AddScaleHost): %d CPUs SMT2 on %d nodes, %d mlx5 NICs of %d queues", ScaleCPUs, ScaleNodes, ScaleDevices, ScalePerDev),
		cpus:  g.place(func(s, k int) int { return (s*g.cores + k) / per }, llcEvery(g.cores, g.cores)),
		nodes: nodesOf(seq(ScaleNodes), TieredDistances(ScaleNodes, 32, Tier{Size: 2, Distance: 12})),
		noLLC: true,
		build: func(t *Tree) { t.AddScaleHost() },
	}
	for d := range ScaleDevices {
		dev := nic("mlx5_core", ScaleBDF(d), d%ScaleNodes, fmt.Sprintf("eth%d", d), ScalePerDev)
		dev.bare = true
		h.devs = append(h.devs, dev)
	}
	return h
}
