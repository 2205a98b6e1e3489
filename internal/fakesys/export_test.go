package fakesys

// Expected is what reading a Shape's tree must give, derived from the
// host data the tree was written from.
type Expected struct {
	Nodes    map[int]string // node id: its cpulist, "" for a CPU-less node
	Siblings []string       // by CPU
	LLC      []string       // by CPU; "" when the tree has no cache information
	Package  []int          // by CPU
	Devices  map[string]ExpectedDevice
}

// ExpectedDevice is one PCI device of a Shape, by BDF in Expected.
type ExpectedDevice struct {
	Driver     string
	Node       int
	Interfaces []string
	// IRQs are all its vectors, Queues those the classifier must call
	// queue IRQs, Managed those the kernel manages.
	IRQs, Queues, Managed int
}

// ExpectedShapes returns Shapes with what reading each must give.
func ExpectedShapes() ([]Shape, []Expected) {
	var shapes []Shape
	var exp []Expected
	for _, h := range fleetHosts() {
		shapes = append(shapes, h.shape())
		exp = append(exp, h.expected())
	}
	return shapes, exp
}

func (h host) expected() Expected {
	e := Expected{Nodes: map[int]string{}, Devices: map[string]ExpectedDevice{}}
	sib := h.groups(func(c hostCPU) int { return c.core })
	llc := h.groups(func(c hostCPU) int { return c.llc })
	node := h.groups(func(c hostCPU) int { return c.node })
	for _, n := range h.nodes {
		e.Nodes[n.id] = node[n.id]
	}
	for _, c := range h.cpus {
		e.Siblings = append(e.Siblings, sib[c.core])
		e.Package = append(e.Package, c.pkg)
		if h.noLLC {
			e.LLC = append(e.LLC, "")
		} else {
			e.LLC = append(e.LLC, llc[c.llc])
		}
	}
	for _, d := range h.devs {
		x := ExpectedDevice{Driver: d.driver, Node: d.node}
		if d.ifname != "" {
			x.Interfaces = []string{d.ifname}
		}
		switch d.kind {
		case devVirtioBlk:
			x.Driver = "virtio-pci"
		case devNIC:
			if d.driver == "virtio_net" {
				x.Driver = "virtio-pci"
			}
		}
		for _, v := range d.vectors() {
			x.IRQs++
			if v.queue {
				x.Queues++
			}
			if v.managed {
				x.Managed++
			}
		}
		e.Devices[d.bdf] = x
	}
	return e
}
