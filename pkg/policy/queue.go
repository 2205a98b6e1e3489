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
	// RoleControl: an IRQ that carries no data queue (config, admin,
	// async events, mailbox), that no rule recognises, or that belongs
	// to no PCI device.
	RoleControl Role = iota + 1
	// RoleQueue: a device IRQ that serves data queue IRQ.Queue.
	RoleQueue
)

// String names the role as logs and the plan output print it.
func (r Role) String() string {
	switch r {
	case RoleControl:
		return "control"
	case RoleQueue:
		return "queue"
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// queueRule is one built-in naming rule. A rule with a "queue" group
// makes matching names queues; one without makes them control IRQs.
type queueRule struct {
	driver string
	re     *regexp.Regexp
}

// builtinRules are tried in order on each action name; the first match
// decides. Driver names come from the kernel's request_irq() calls.
var builtinRules = []queueRule{
	// virtio_pci vp_find_vqs_msix: "%s-config", "%s-%s" with the vq name;
	// virtio_net names vqs input.K/output.K, virtio_blk req.K.
	{"virtio", regexp.MustCompile(`^virtio\d+-config$`)},
	{"virtio", regexp.MustCompile(`^virtio\d+-(?:input|output|req)\.(?P<queue>\d+)$`)},
	// mlx5 eq.c: "mlx5_comp%d@pci:%s"; async/cmd/pages EQs are control.
	{"mlx5", regexp.MustCompile(`^mlx5_comp(?P<queue>\d+)@`)},
	{"mlx5", regexp.MustCompile(`^mlx5_`)},
	// MANA gdma_main.c: "mana_q%d@pci:%s" and "mana_hwc@pci:%s".
	{"mana", regexp.MustCompile(`^mana_q(?P<queue>\d+)@`)},
	{"mana", regexp.MustCompile(`^mana_`)},
	// gve: "gve-ntfy-blk%d@pci:%s", "gve-mgmnt@pci:%s".
	{"gve", regexp.MustCompile(`^gve-ntfy-blk(?P<queue>\d+)@`)},
	// Intel (ice, i40e, iavf, igb, ixgbe, idpf) and bnxt: "%s-TxRx-%d",
	// "%s-rx-%d", "%s-tx-%d".
	{"intel", regexp.MustCompile(`-(?:TxRx|rx|tx)-(?P<queue>\d+)$`)},
	// nvme pci.c: "nvme%dq%d"; q0 is the admin queue.
	{"nvme", regexp.MustCompile(`^nvme\d+q0$`)},
	{"nvme", regexp.MustCompile(`^nvme\d+q(?P<queue>\d+)$`)},
	// Words that name a control vector in many drivers, checked before
	// the generic rule so "idpf-Mailbox-0" or "ena-mgmnt" stay control.
	{"control", regexp.MustCompile(`(?i)(?:config|ctrl|control|misc|async|mbox|mailbox|admin|mgmnt|mgmt|hwc|cmd|event|aer|pme)`)},
	// Generic: a trailing number after a separator, ignoring an
	// "@pci:<BDF>" suffix ("iwlwifi:queue_3", "eth0-Tx-Rx-3").
	{"generic", regexp.MustCompile(`^[^@]*?[-_.q](?P<queue>\d+)(?:@.*)?$`)},
}

// classifyAction applies the built-in naming rules to one action name and
// returns RoleQueue with the raw (not normalised) queue index, or
// RoleControl with -1. Results are memoised: every round classifies the
// same names again, and a name that no rule matches tries all of them.
func classifyAction(action string) (Role, int) {
	classified.Lock()
	defer classified.Unlock()
	if c, ok := classified.m[action]; ok {
		return c.role, c.queue
	}
	role, q := classifyBuiltin(action)
	if len(classified.m) >= maxClassified {
		clear(classified.m) // names of long-gone devices
	}
	classified.m[action] = class{role, q}
	return role, q
}

// classified memoises classifyAction, bounded by maxClassified names: a host
// has a few thousand IRQ names at most.
var classified = struct {
	sync.Mutex
	m map[string]class
}{m: map[string]class{}}

const maxClassified = 1 << 14

func classifyBuiltin(action string) (Role, int) {
	for _, r := range builtinRules {
		if !r.re.MatchString(action) {
			continue
		}
		if q, ok := queueIndex(r.re, action); ok {
			return RoleQueue, q
		}
		return RoleControl, -1
	}
	return RoleControl, -1
}

// queueIndex returns the queue index that re captures in its named
// group "queue" from name. It reports false when re does not match, has
// no "queue" group, or the group is not a decimal number. A rule's
// queue_regex names with it the queues of drivers the built-in rules
// miss.
func queueIndex(re *regexp.Regexp, name string) (int, bool) {
	if re == nil {
		return 0, false
	}
	gi := re.SubexpIndex("queue")
	if gi < 0 {
		return 0, false
	}
	m := re.FindStringSubmatch(name)
	if m == nil || m[gi] == "" {
		return 0, false
	}
	q, err := strconv.Atoi(m[gi])
	if err != nil || q < 0 {
		return 0, false
	}
	return q, true
}

// classifyActions classifies a (possibly shared) IRQ by its actions: the
// first action that names a queue wins, otherwise the IRQ is control.
func classifyActions(actions []string, re *regexp.Regexp) (Role, int) {
	for _, a := range actions {
		if re != nil {
			if q, ok := queueIndex(re, a); ok {
				return RoleQueue, q
			}
			continue
		}
		if role, q := classifyAction(a); role == RoleQueue {
			return role, q
		}
	}
	return RoleControl, -1
}

// class is what the naming rules make of one IRQ of a device.
type class struct {
	role  Role
	queue int // normalised: the device's lowest queue is 0; -1 when not a queue
}

// classify applies the naming rules to the IRQs of one device: re (a
// queue IRQ is one whose action re matches with a numeric "queue" group;
// everything else is control) or, when re is nil, the built-in rules.
// Queue indices are shifted so the device's lowest queue is 0, not
// ranked: order and sharing are kept, and a missing middle queue leaves
// a gap instead of renumbering the rest. This is the one place IRQs are
// classified.
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
