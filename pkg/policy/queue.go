package policy

import (
	"regexp"
	"strconv"
	"sync"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// Role says what an IRQ does for its device, so the policy can spread
// queue IRQs over CPUs and park control IRQs.
type Role uint8

const (
	// RoleControl: no data queue (config, admin, mailbox), no rule
	// recognises it, or no PCI device owns it.
	RoleControl Role = iota + 1
	RoleQueue        // serves data queue IRQ.Queue
)

// String names the role for logs and plan output.
func (r Role) String() string {
	switch r {
	case RoleControl:
		return "control"
	case RoleQueue:
		return "queue"
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// builtinRules are tried in order on each action name; the first match
// decides: a queue when it has a "queue" group, else control. Names come
// from the drivers' request_irq() calls.
var builtinRules = []*regexp.Regexp{
	// virtio_pci vp_find_vqs_msix: "%s-config", "%s-%s" with the vq name;
	// virtio_net names vqs input.K/output.K, virtio_blk req.K.
	regexp.MustCompile(`^virtio\d+-config$`),
	regexp.MustCompile(`^virtio\d+-(?:input|output|req)\.(?P<queue>\d+)$`),
	// mlx5 eq.c: "mlx5_comp%d@pci:%s"; async/cmd/pages EQs are control.
	regexp.MustCompile(`^mlx5_comp(?P<queue>\d+)@`),
	regexp.MustCompile(`^mlx5_`),
	// MANA gdma_main.c: "mana_q%d@pci:%s" and "mana_hwc@pci:%s".
	regexp.MustCompile(`^mana_q(?P<queue>\d+)@`),
	regexp.MustCompile(`^mana_`),
	// gve: "gve-ntfy-blk%d@pci:%s", "gve-mgmnt@pci:%s".
	regexp.MustCompile(`^gve-ntfy-blk(?P<queue>\d+)@`),
	// Intel (ice, i40e, iavf, igb, ixgbe, idpf) and bnxt: "%s-TxRx-%d",
	// "%s-rx-%d", "%s-tx-%d".
	regexp.MustCompile(`-(?:TxRx|rx|tx)-(?P<queue>\d+)$`),
	// nvme pci.c: "nvme%dq%d"; q0 is the admin queue.
	regexp.MustCompile(`^nvme\d+q0$`),
	regexp.MustCompile(`^nvme\d+q(?P<queue>\d+)$`),
	// Words that name a control vector in many drivers, checked before
	// the generic rule so "idpf-Mailbox-0" or "ena-mgmnt" stay control.
	regexp.MustCompile(`(?i)(?:config|ctrl|control|misc|async|mbox|mailbox|admin|mgmnt|mgmt|hwc|cmd|event|aer|pme)`),
	// Generic: a trailing number after a separator, ignoring an
	// "@pci:<BDF>" suffix ("iwlwifi:queue_3", "eth0-Tx-Rx-3").
	regexp.MustCompile(`^[^@]*?[-_.q](?P<queue>\d+)(?:@.*)?$`),
}

// classifyAction applies the built-in rules to one action name: RoleQueue
// with the raw (not normalised) queue index, or RoleControl with -1.
// Results are memoised: every round classifies the same names again,
// and a name that no rule matches tries all of them.
func classifyAction(action string) (Role, int) {
	classified.Lock()
	defer classified.Unlock()
	c, ok := classified.m[action]
	if ok {
		return c.role, c.queue
	}
	c = class{role: RoleControl, queue: -1}
	for _, r := range builtinRules {
		if r.MatchString(action) {
			if q, ok := queueIndex(r, action); ok {
				c = class{role: RoleQueue, queue: q}
			}
			break
		}
	}
	if len(classified.m) >= maxClassified {
		clear(classified.m) // names of long-gone devices
	}
	classified.m[action] = c
	return c.role, c.queue
}

// classified memoises classifyAction; a host has a few thousand IRQ
// names at most.
var classified = struct {
	sync.Mutex
	m map[string]class
}{m: map[string]class{}}

const maxClassified = 1 << 14

// queueIndex returns the queue index that re (a built-in rule or a
// queue_regex) captures from name in its group "queue"; false when
// there is none or it is not a decimal number.
func queueIndex(re *regexp.Regexp, name string) (int, bool) {
	if re == nil || re.SubexpIndex("queue") < 0 {
		return 0, false
	}
	if m := re.FindStringSubmatch(name); m != nil {
		if q, err := strconv.Atoi(m[re.SubexpIndex("queue")]); err == nil && q >= 0 {
			return q, true
		}
	}
	return 0, false
}

// classifyActions classifies a (possibly shared) IRQ by its actions: the
// first action that names a queue wins, otherwise the IRQ is control.
func classifyActions(actions []string, re *regexp.Regexp) (Role, int) {
	for _, a := range actions {
		if re == nil {
			if role, q := classifyAction(a); role == RoleQueue {
				return role, q
			}
		} else if q, ok := queueIndex(re, a); ok {
			return RoleQueue, q
		}
	}
	return RoleControl, -1
}

// class is what the naming rules make of one IRQ of a device.
type class struct {
	role  Role
	queue int // normalised: the device's lowest queue is 0; -1 when not a queue
	// source is where the queue came from (QueueFromNetlink or
	// QueueFromName), "" for a control IRQ; note says how netlink and
	// the name disagreed (fromNetlink), "" when they did not.
	source, note string
}

// classify applies re (nil: the built-in rules) to the IRQs of one
// device. Queue indices are shifted so the device's lowest queue is 0,
// not ranked: a missing middle queue leaves a gap instead of
// renumbering the rest.
func classify(irqs []inventory.IRQ, re *regexp.Regexp) []class {
	out := make([]class, len(irqs))
	lowest := -1
	for i, q := range irqs {
		out[i].role, out[i].queue = classifyActions(q.Actions, re)
		if out[i].role == RoleQueue && (lowest < 0 || out[i].queue < lowest) {
			lowest = out[i].queue
		}
	}
	for i := range out {
		if out[i].role == RoleQueue {
			out[i].queue -= lowest
		}
	}
	return out
}
