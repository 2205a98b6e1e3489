package policy

import (
	"regexp"
	"strconv"
)

// Dir is the direction a queue IRQ serves, which XPS and NAPI follow.
type Dir uint8

const (
	DirNone Dir = iota // not a queue IRQ
	DirBoth            // one vector completes the rx and tx queue of its index
	DirRx              // receive only
	DirTx              // transmit completions only
)

var dirNames = [...]string{"none", "combined", "rx", "tx"}

// String names the direction for logs and tests.
func (d Dir) String() string {
	if int(d) < len(dirNames) {
		return dirNames[d]
	}
	return "dir(" + strconv.Itoa(int(d)) + ")"
}

// Transmits reports whether the IRQ completes transmits.
func (d Dir) Transmits() bool { return d == DirBoth || d == DirTx }

// Receives reports whether the IRQ serves a receive queue.
func (d Dir) Receives() bool { return d == DirBoth || d == DirRx }

// layout is how a rule's queues depend on the device's other IRQs.
type layout uint8

const (
	layoutPlain               layout = iota
	layoutHalves                     // gve: tx blocks first, rx in the second half
	layoutRxSharedUnlessSplit        // ionic: "rx" serves both unless tx has its own
	layoutBare                       // "<netdev>-<n>": sfc's channel, tg3's ringless vector
	layoutOrder                      // no index in the name: the vector order is the queue
)

// nameRule is one driver's naming rule, from its request_irq call; one
// without a "queue" group names control IRQs, unless its layout is
// layoutOrder. dir is the direction
// unless a "dir" group names one (dirWords); queue = (n - base) / step
// (nvme's q1 and mlx4's EQ 1 are queue 0; hns3 counts TxRx by two).
type nameRule struct {
	drivers    string
	re         *regexp.Regexp
	dir        Dir
	base, step int
	layout     layout
	cite       string // drivers/... file and function of the format string
}

// dirWords maps a rule's "dir" group to the direction it names.
var dirWords = map[string]Dir{
	"TxRx": DirBoth, "txrx": DirBoth, "rxtx": DirBoth,
	"rx": DirRx, "Rx": DirRx, "input": DirRx, "rxq": DirRx,
	"tx": DirTx, "Tx": DirTx, "output": DirTx, "txq": DirTx,
}

// bdf matches a PCI device name with its domain, as pci_name() gives it.
const bdf = `[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]`

func queueRule(drivers, re string, dir Dir, cite string) nameRule {
	return nameRule{drivers: drivers, re: regexp.MustCompile(re), dir: dir, step: 1, cite: cite}
}

func controlRule(drivers, re, cite string) nameRule {
	return nameRule{drivers: drivers, re: regexp.MustCompile(re), cite: cite}
}

// builtinRules are tried in order; the first match decides: drivers'
// control names (some look like queues: ice's ":ctrl-TxRx-0"), their
// queue names, shared formats, control words, a trailing number.
var builtinRules = []nameRule{
	// virtio_pci: "%s-config", "%s-virtqueues", "%s-%s" with the vq's
	// name: virtio_net's input.K, output.K, control; virtio_blk's req.K.
	controlRule("virtio_pci", `^virtio\d+-(?:config|virtqueues)$`,
		"drivers/virtio/virtio_pci_common.c vp_request_msix_vectors"),
	queueRule("virtio_net", `^virtio\d+-(?P<dir>input|output)\.(?P<queue>\d+)$`, DirBoth,
		"drivers/virtio/virtio_pci_common.c vp_find_one_vq_msix; drivers/net/virtio_net.c virtnet_find_vqs"),
	queueRule("virtio_blk", `^virtio\d+-req\.(?P<queue>\d+)$`, DirBoth,
		"drivers/block/virtio_blk.c init_vq"),
	controlRule("virtio_pci", `^virtio\d+-`,
		"drivers/virtio/virtio_pci_common.c vp_find_one_vq_msix (control, balloon, scsi vqs)"),

	// nvme: "nvme%dq%d"; q0 is the admin queue, q1 the first I/O queue.
	controlRule("nvme", `^nvme\d+q0$`, "drivers/nvme/host/pci.c queue_request_irq"),
	{drivers: "nvme", re: regexp.MustCompile(`^nvme\d+q(?P<queue>\d+)$`), dir: DirBoth, base: 1, step: 1,
		cite: "drivers/nvme/host/pci.c queue_request_irq"},

	// mlx5: "%s@pci:%s" with mlx5_async0, mlx5_compN, mlx5_combined0,
	// mlx5_sf_ctrlN, mlx5_sf_compN; completion EQs serve rx and tx.
	queueRule("mlx5_core", `^mlx5_(?:sf_)?comp(?P<queue>\d+)@pci:`, DirBoth,
		"drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_set_name, irq_sf_set_name, mlx5_irq_alloc"),
	controlRule("mlx5_core", `^mlx5_`, "drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_set_name, irq_sf_set_name"),

	// mlx4: "mlx4-%d@%s" (EQ 0 is async), "mlx4-async@pci:%s",
	// "mlx4_core@pci:%s" without MSI-X.
	{drivers: "mlx4_core", re: regexp.MustCompile(`^mlx4-(?P<queue>\d+)@` + bdf + `$`), dir: DirBoth, base: 1, step: 1,
		cite: "drivers/net/ethernet/mellanox/mlx4/eq.c mlx4_assign_eq"},
	controlRule("mlx4_core", `^mlx4(?:-async|_core)@pci:`, "drivers/net/ethernet/mellanox/mlx4/eq.c mlx4_init_eq_table"),

	// MANA: "mana_hwc@pci:%s" (vector 0), "mana_q%d@pci:%s" from 0.
	queueRule("mana", `^mana_q(?P<queue>\d+)@pci:`, DirBoth,
		"drivers/net/ethernet/microsoft/mana/gdma_main.c mana_gd_setup_irqs"),
	controlRule("mana", `^mana_hwc@pci:`, "drivers/net/ethernet/microsoft/mana/gdma_main.c mana_gd_setup_irqs"),

	// gve: "gve-mgmnt@pci:%s"; "gve-ntfy-blk%d@pci:%s" (layoutHalves).
	controlRule("gve", `^gve-mgmnt@pci:`, "drivers/net/ethernet/google/gve/gve_main.c gve_alloc_notify_blocks"),
	{drivers: "gve", re: regexp.MustCompile(`^gve-ntfy-blk(?P<queue>\d+)@pci:`), dir: DirBoth, step: 1, layout: layoutHalves,
		cite: "drivers/net/ethernet/google/gve/gve_main.c gve_alloc_notify_blocks"},

	// ENA: "ena-mgmnt@pci:%s", "%s-Tx-Rx-%d" with the netdev name.
	controlRule("ena", `^ena-mgmnt@pci:`, "drivers/net/ethernet/amazon/ena/ena_netdev.c ena_setup_mgmnt_intr"),
	queueRule("ena", `-Tx-Rx-(?P<queue>\d+)$`, DirBoth, "drivers/net/ethernet/amazon/ena/ena_netdev.c ena_setup_io_intr"),

	// ice, i40e: "<drv>-<BDF>:misc", ":ll_ts", and non-netdev VSIs'
	// vectors ":ctrl-TxRx-0", ":fdir-TxRx-0".
	controlRule("ice,i40e", `^(?:ice|i40e)-`+bdf+`:`,
		"drivers/net/ethernet/intel/ice/ice_main.c ice_req_irq_msix_misc, ice_vsi_open_ctrl; drivers/net/ethernet/intel/i40e/i40e_main.c i40e_probe, i40e_vsi_open"),
	// ice, i40e: "<drv>-<netdev>-<TxRx|rx|tx>-%d", rx and tx counted apart.
	queueRule("ice,i40e", `^(?:ice|i40e)-.+-(?P<dir>TxRx|rx|tx)-(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/intel/ice/ice_main.c ice_vsi_req_irq_msix; drivers/net/ethernet/intel/i40e/i40e_main.c i40e_vsi_request_irq_msix"),
	// iavf: "iavf-%s:mbx" with the BDF; "iavf-%s-TxRx-%u" (rx, tx).
	controlRule("iavf", `^iavf-`+bdf+`:mbx$`, "drivers/net/ethernet/intel/iavf/iavf_main.c iavf_request_misc_irq"),
	queueRule("iavf", `^iavf-.+-(?P<dir>TxRx|rx|tx)-(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/intel/iavf/iavf_main.c iavf_request_traffic_irqs"),
	// idpf: "idpf-Mailbox-0"; "idpf-<netdev>-<TxRx|Rx|Tx>-%d".
	controlRule("idpf", `^idpf-Mailbox-\d+$`, "drivers/net/ethernet/intel/idpf/idpf_lib.c idpf_mb_intr_req_irq"),
	queueRule("idpf", `^idpf-.+-(?P<dir>TxRx|Rx|Tx)-(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/intel/idpf/idpf_txrx.c idpf_vport_intr_req_irq"),

	// hns3: "hns3-<BDF>-<TxRx|Rx|Tx>-%d", TxRx stepping by two;
	// hclge/hclgevf: "%s-misc-<BDF>".
	{drivers: "hns3", re: regexp.MustCompile(`^hns3-` + bdf + `-TxRx-(?P<queue>\d+)$`), dir: DirBoth, step: 2,
		cite: "drivers/net/ethernet/hisilicon/hns3/hns3_enet.c hns3_nic_init_irq"},
	queueRule("hns3", `^hns3-`+bdf+`-(?P<dir>Rx|Tx)-(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/hisilicon/hns3/hns3_enet.c hns3_nic_init_irq"),
	controlRule("hclge,hclgevf", `^hclge(?:vf)?-misc-`+bdf+`$`,
		"drivers/net/ethernet/hisilicon/hns3/hns3pf/hclge_main.c hclge_misc_irq_init; hns3vf/hclgevf_main.c hclgevf_misc_irq_init"),

	// qed: slow path "sp-%d-%02x:%02x.%02x", or "%02x:%02x.%02x" on
	// INTx; qede: "<netdev>-fp-%d".
	controlRule("qed", `^(?:sp-\d+-)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]{2}$`,
		"drivers/net/ethernet/qlogic/qed/qed_main.c qed_slowpath_irq_req"),
	queueRule("qede", `-fp-(?P<queue>\d+)$`, DirBoth, "drivers/net/ethernet/qlogic/qede/qede_main.c qede_init_fp"),

	// cxgb4: "%s-Rx%d" serves both (tx queue j's egress updates go to
	// rx queue j); FWeventq, mirror, ETHOFLD and ULD queues are control.
	queueRule("cxgb4", `-Rx(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/chelsio/cxgb4/cxgb4_main.c setup_sge_queues"),
	controlRule("cxgb4", `-(?:FWeventq|mirrorrxq\d+|eorxq\d+)$`,
		"drivers/net/ethernet/chelsio/cxgb4/cxgb4_main.c setup_fw_sge_queues, cxgb4_port_mirror_alloc_queues; cxgb4_tc_mqprio.c cxgb4_mqprio_alloc_hw_resources"),

	// nfp: "%s-rxtx-%d" ("ctrl-" for the control vNIC), "-exn", "-lsc".
	controlRule("nfp", `^ctrl-rxtx-\d+$|-(?:exn|lsc)$`,
		"drivers/net/ethernet/netronome/nfp/nfp_net_common.c nfp_net_prepare_vector, nfp_net_open_alloc_all"),

	// ionic: "ionic-<netdev|BDF>-L<lif>-<name>", name cut to 8: rxK,
	// txK (split interrupts only), admin0, notifyq, hwstamp.
	{drivers: "ionic", re: regexp.MustCompile(`^ionic-.+-L\d+-(?P<dir>rx|tx)(?P<queue>\d+)$`), dir: DirBoth, step: 1,
		layout: layoutRxSharedUnlessSplit, cite: "drivers/net/ethernet/pensando/ionic/ionic_lif.c ionic_request_irq; ionic_dev.c ionic_q_init"},
	controlRule("ionic", `^ionic-`, "drivers/net/ethernet/pensando/ionic/ionic_lif.c ionic_request_irq, ionic_qcqs_alloc"),

	// hinic: "%s_rxq%d", "%s_txq%d"; hinic3: "%s_qp%u"; both:
	// "hinic[3]_[ac]eq%d@pci:%s" event queues.
	controlRule("hinic,hinic3", `^hinic3?_[ac]eq\d+@pci:`,
		"drivers/net/ethernet/huawei/hinic/hinic_hw_eqs.c init_eq; hinic3/hinic3_eqs.c request_eq_irq"),
	queueRule("hinic", `_(?P<dir>rxq|txq)(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/huawei/hinic/hinic_rx.c hinic_init_rxq; hinic_tx.c hinic_init_txq"),
	queueRule("hinic3", `_qp(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/huawei/hinic3/hinic3_irq.c hinic3_qps_irq_init"),
	// LiquidIO: "LiquidIO%u-pf%u-rxtx-%u" (vf too), "LiquidIO%u-pf%u-aux".
	queueRule("liquidio", `^LiquidIO\d+-[pv]f\d+-rxtx-(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/cavium/liquidio/lio_core.c octeon_setup_interrupt"),
	controlRule("liquidio", `^LiquidIO\d+-`, "drivers/net/ethernet/cavium/liquidio/lio_core.c octeon_setup_interrupt"),
	// octeontx2: "RVUPF%d_ME0", "RVUPF%d_FLR0", "RVUPF_VF Mbox0" ...
	controlRule("octeontx2", `^RVU(?:PF|VF)`, "drivers/net/ethernet/marvell/octeontx2/nic/otx2_pf.c otx2_register_flr_me_intr, otx2_register_pfvf_mbox_intr"),
	// enic "-err", "-notify"; octeontx2 "-qerr"; sfc "-ptp", "-mae" and
	// XDP transmit channels "-xdp-%d".
	controlRule("enic,octeontx2,sfc", `-(?:err|notify|qerr|ptp|mae|xdp-\d+)$`,
		"drivers/net/ethernet/cisco/enic/enic_main.c enic_request_intr; marvell/octeontx2/nic/otx2_pf.c otx2_open; sfc/ptp.c efx_ptp_get_channel_name; sfc/tc_counters.c efx_tc_get_channel_name; sfc/efx_channels.c efx_get_channel_name"),

	// The shared "<netdev>-<dir>-%d" (bnxt_en numbers tx after rx:
	// classify shifts each direction to 0).
	queueRule("ixgbe,ixgbevf,igb,igc,e1000e,bnxt_en,enic,sfc,tg3,vmxnet3,nfp,octeontx2",
		`-(?P<dir>TxRx|txrx|rxtx|rx|tx)-(?P<queue>\d+)$`, DirBoth,
		"drivers/net/ethernet/intel/ixgbe/ixgbe_main.c ixgbe_request_msix_irqs; ixgbevf/ixgbevf_main.c ixgbevf_request_msix_irqs; igb/igb_main.c igb_request_msix; igc/igc_main.c igc_request_msix; e1000e/netdev.c e1000_request_msix; broadcom/bnxt/bnxt.c bnxt_setup_msix; cisco/enic/enic_main.c enic_request_intr; sfc/efx_channels.c efx_get_channel_name; broadcom/tg3.c tg3_request_irq; drivers/net/vmxnet3/vmxnet3_drv.c vmxnet3_request_irqs; netronome/nfp/nfp_net_common.c nfp_net_prepare_vector; marvell/octeontx2/nic/otx2_pf.c otx2_open"),
	// be2net: "%s-q%d", one EQ per rx/tx queue pair.
	queueRule("be2net", `-q(?P<queue>\d+)$`, DirBoth, "drivers/net/ethernet/emulex/benet/be_main.c be_msix_register"),

	// Storage HBAs, a reply queue per vector: hpsa "%s-msix%d" (devname
	// "hpsa%d"), mpt3sas "%s%d-msix%d", megaraid_sas "%s%u-msix%u",
	// lpfc "lpfc:%d".
	queueRule("hpsa,mpt2sas,mpt3sas,megaraid_sas", `^(?:hpsa|mpt[23]sas|megasas)\d+-msix(?P<queue>\d+)$`, DirBoth,
		"drivers/scsi/hpsa.c hpsa_request_irqs; mpt3sas/mpt3sas_base.c _base_request_irq; megaraid/megaraid_sas_base.c megasas_setup_irqs_msix"),
	queueRule("lpfc", `^lpfc:(?P<queue>\d+)$`, DirBoth, "drivers/scsi/lpfc/lpfc_init.c lpfc_sli4_enable_msix"),
	// smartpqi, aacraid and megaraid_sas before "-msix" name every
	// vector after the driver; vector i serves queue i (layoutOrder).
	{drivers: "smartpqi,aacraid,megaraid_sas", re: regexp.MustCompile(`^(?:smartpqi|aacraid|megasas)$`), dir: DirBoth, step: 1, layout: layoutOrder,
		cite: "drivers/scsi/smartpqi/smartpqi_init.c pqi_request_irqs; aacraid/commsup.c aac_acquire_irq; megaraid/megaraid_sas_base.c megasas_probe_one (Linux 3.2)"},
	// ccp: "ccp-%u" and "psp-%u" number the device, not a queue.
	controlRule("ccp", `^(?:ccp|psp)-\d+$`, "drivers/crypto/ccp/ccp-dev.c ccp_alloc_struct; psp-dev.c psp_alloc_struct"),
	// libata named a host's IRQ by its BDF before "ahci[%s]".
	controlRule("ahci", `^`+bdf+`$`, "drivers/ata/libata-core.c ata_host_activate"),

	// Control words, before the generic rule: vmxnet3's "eth0-event-4".
	controlRule("any", `(?i)(?:config|ctrl|control|misc|async|mbox|mailbox|admin|mgmnt|mgmt|hwc|cmd|event|aer|pme)`, "generic"),
	// Generic: a trailing number, ignoring "@pci:<BDF>": sfc's and
	// bnx2's "%s-%d".
	{drivers: "sfc,bnx2,any", re: regexp.MustCompile(`^[^@]*?[-_.q](?P<queue>\d+)(?:@.*)?$`), dir: DirBoth, step: 1, layout: layoutBare,
		cite: "drivers/net/ethernet/sfc/efx_channels.c efx_get_channel_name; tg3.c tg3_request_irq; broadcom/bnx2.c bnx2_enable_msix"},
}
