package policy

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/numairqd/numairqd/pkg/inventory"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		action string
		role   Role
		queue  int
	}{
		{"virtio0-input.3", RoleQueue, 3},
		{"virtio0-output.3", RoleQueue, 3},
		{"virtio12-config", RoleControl, -1},
		{"virtio1-req.2", RoleQueue, 2},
		{"virtio0-inflate", RoleControl, -1},
		{"virtio3-event", RoleControl, -1},
		{"mlx5_comp7@pci:0000:41:00.0", RoleQueue, 7},
		{"mlx5_async0@pci:0000:41:00.0", RoleControl, -1},
		{"mlx5_pages_eq@pci:0000:41:00.0", RoleControl, -1},
		{"mana_q4@pci:7870:00:00.0", RoleQueue, 4},
		{"mana_hwc@pci:7870:00:00.0", RoleControl, -1},
		{"gve-ntfy-blk2@pci:0000:00:04.0", RoleQueue, 2},
		{"gve-mgmnt@pci:0000:00:04.0", RoleControl, -1},
		{"eth0-TxRx-5", RoleQueue, 5},
		{"ens1f0-TxRx-0", RoleQueue, 0},
		{"eth1-rx-2", RoleQueue, 2},
		{"eth1-tx-2", RoleQueue, 2},
		{"ice-0000:3b:00.0:misc", RoleControl, -1},
		{"idpf-0000:3b:00.0-Mailbox-0", RoleControl, -1},
		{"nvme0q0", RoleControl, -1},
		{"nvme0q1", RoleQueue, 0}, // the first I/O queue
		{"nvme12q64", RoleQueue, 63},
		{"eth0-Tx-Rx-3", RoleQueue, 3},
		{"iwlwifi:queue_2", RoleQueue, 2},
		{"ena-mgmnt@pci:0000:00:05.0", RoleControl, -1},
		{"eth0", RoleControl, -1},
		{"ahci[0000:00:17.0]", RoleControl, -1},
		{"i915", RoleControl, -1},
		{"xhci_hcd", RoleControl, -1},
		{"", RoleControl, -1},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			c, _ := classifyAction(tt.action)
			if c.role != tt.role || c.queue != tt.queue {
				t.Errorf("classifyAction(%q) = %v, %d; want %v, %d", tt.action, c.role, c.queue, tt.role, tt.queue)
			}
		})
	}
}

func TestQueueIndex(t *testing.T) {
	tests := []struct {
		re     string
		name   string
		want   int
		wantOK bool
	}{
		{`^foo-(?P<queue>\d+)$`, "foo-12", 12, true},
		{`^foo-(?P<queue>\d+)$`, "bar-12", 0, false},
		{`^foo-(\d+)$`, "foo-12", 0, false},                          // no queue group
		{`^foo-(?P<queue>\w+)$`, "foo-x", 0, false},                  // not a number
		{`^foo(?:-(?P<queue>\d+))?$`, "foo", 0, false},               // empty group
		{`hw(?P<queue>\d+)@`, "mydrv_hw3@pci:0000:01:00.0", 3, true}, // unanchored
	}
	for _, tt := range tests {
		t.Run(tt.re+"/"+tt.name, func(t *testing.T) {
			got, ok := queueIndex(regexp.MustCompile(tt.re), tt.name)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if _, ok := queueIndex(nil, "x"); ok {
		t.Error("nil regexp matched")
	}
}

type roleQueue struct {
	Role  Role
	Queue int
}

func TestClassifyNormalises(t *testing.T) {
	dev := func(names ...[]string) []inventory.IRQ {
		var out []inventory.IRQ
		for i, a := range names {
			out = append(out, inventory.IRQ{Number: 100 + i, Device: "0000:01:00.0", Actions: a})
		}
		return out
	}
	one := func(s ...string) []string { return s }
	tests := []struct {
		name string
		irqs []inventory.IRQ
		re   string
		want []roleQueue
	}{
		{
			name: "nvme admin plus queues from 1",
			irqs: dev(one("nvme0q0"), one("nvme0q1"), one("nvme0q2"), one("nvme0q3")),
			want: []roleQueue{{RoleControl, -1}, {RoleQueue, 0}, {RoleQueue, 1}, {RoleQueue, 2}},
		},
		{
			name: "mana hwc plus queues from 1",
			irqs: dev(one("mana_hwc@pci:7870:00:00.0"), one("mana_q1@pci:7870:00:00.0"), one("mana_q2@pci:7870:00:00.0")),
			want: []roleQueue{{RoleControl, -1}, {RoleQueue, 0}, {RoleQueue, 1}},
		},
		{
			name: "virtio pairs share an index",
			irqs: dev(one("virtio0-config"), one("virtio0-input.0"), one("virtio0-output.0"), one("virtio0-input.1"), one("virtio0-output.1")),
			want: []roleQueue{{RoleControl, -1}, {RoleQueue, 0}, {RoleQueue, 0}, {RoleQueue, 1}, {RoleQueue, 1}},
		},
		{
			name: "gap is kept, order preserved",
			irqs: dev(one("eth0-TxRx-4"), one("eth0-TxRx-2"), one("eth0-TxRx-7")),
			want: []roleQueue{{RoleQueue, 2}, {RoleQueue, 0}, {RoleQueue, 5}},
		},
		{
			name: "shared IRQ: first queue action wins",
			irqs: dev(one("nvme0q0", "nvme0q1")),
			want: []roleQueue{{RoleQueue, 0}},
		},
		{
			name: "config regex",
			irqs: dev(one("acme-ctl"), one("acme-ring9"), one("acme-ring10")),
			re:   `^acme-ring(?P<queue>\d+)$`,
			want: []roleQueue{{RoleControl, -1}, {RoleQueue, 0}, {RoleQueue, 1}},
		},
		{
			name: "config regex overrides built-ins",
			irqs: dev(one("nvme0q0"), one("nvme0q1")),
			re:   `^nvme\d+q(?P<queue>\d+)$`,
			want: []roleQueue{{RoleQueue, 0}, {RoleQueue, 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var re *regexp.Regexp
			if tt.re != "" {
				re = regexp.MustCompile(tt.re)
			}
			var got []roleQueue
			for _, c := range classify(tt.irqs, re) {
				got = append(got, roleQueue{c.role, c.queue})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"virtio0-input.3", "mlx5_comp7@pci:0000:41:00.0", "nvme0q0", "eth0-TxRx-99999999999999999999", "a.1@b", "q"} {
		f.Add(s)
	}
	for _, n := range driverNames {
		f.Add(n.name)
	}
	// classifyAction never panics, gives queue -1 and no direction
	// exactly for control, and classify keeps that on a device of two
	// IRQs named after the input.
	f.Fuzz(func(t *testing.T, name string) {
		c, _ := classifyAction(name)
		control := c.role == RoleControl && c.queue == -1 && c.dir == DirNone
		queue := c.role == RoleQueue && c.queue >= 0 && c.dir != DirNone
		if !control && !queue {
			t.Fatalf("classifyAction(%q) = %+v", name, c)
		}
		irqs := []inventory.IRQ{{Number: 1, Actions: []string{name}}, {Number: 2, Actions: []string{name + "-rx-1", name}}}
		if err := classProperties(classify(irqs, nil)); err != nil {
			t.Fatalf("classify(%q): %v", name, err)
		}
	})
}
