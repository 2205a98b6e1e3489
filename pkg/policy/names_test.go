package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/napi"
)

// driverName is one IRQ name a driver really requests: src is the
// kernel file and function whose format string makes it (Linux 6.12),
// queue -1 for a control IRQ. The queue is the driver's 0-based index
// before classify's normalisation.
type driverName struct {
	driver, name string
	queue        int
	dir          Dir
	src          string
}

const ctl = -1

// driverNames: real names from 46 driver modules, with interface names that end
// in digits (enp2s0f4, ens1f0np0, eth0), renamed ones (wan, lan0,
// storage), BDFs with their domain and names that hold the interface.
var driverNames = []driverName{
	{"virtio_net", "virtio0-input.0", 0, DirRx, "drivers/net/virtio_net.c virtnet_find_vqs"},
	{"virtio_net", "virtio0-output.0", 0, DirTx, "drivers/net/virtio_net.c virtnet_find_vqs"},
	{"virtio_net", "virtio3-input.15", 15, DirRx, "drivers/net/virtio_net.c virtnet_find_vqs"},
	{"virtio_net", "virtio3-output.15", 15, DirTx, "drivers/net/virtio_net.c virtnet_find_vqs"},
	{"virtio_pci", "virtio0-config", ctl, DirNone, "drivers/virtio/virtio_pci_common.c vp_request_msix_vectors"},
	{"virtio_pci", "virtio1-virtqueues", ctl, DirNone, "drivers/virtio/virtio_pci_common.c vp_request_msix_vectors"},
	{"virtio_pci", "virtio0-control", ctl, DirNone, "drivers/virtio/virtio_pci_common.c vp_find_one_vq_msix"},
	{"virtio_blk", "virtio2-req.0", 0, DirBoth, "drivers/block/virtio_blk.c init_vq"},
	{"virtio_blk", "virtio2-req.7", 7, DirBoth, "drivers/block/virtio_blk.c init_vq"},

	{"nvme", "nvme0q0", ctl, DirNone, "drivers/nvme/host/pci.c queue_request_irq"},
	{"nvme", "nvme0q1", 0, DirBoth, "drivers/nvme/host/pci.c queue_request_irq"},
	{"nvme", "nvme12q64", 63, DirBoth, "drivers/nvme/host/pci.c queue_request_irq"},

	{"mlx5_core", "mlx5_async0@pci:0000:41:00.0", ctl, DirNone, "drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_set_name"},
	{"mlx5_core", "mlx5_comp0@pci:0000:41:00.0", 0, DirBoth, "drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_set_name"},
	{"mlx5_core", "mlx5_comp63@pci:0001:a1:00.1", 63, DirBoth, "drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_set_name"},
	{"mlx5_core", "mlx5_combined0@pci:0000:41:00.0", ctl, DirNone, "drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_set_name"},
	{"mlx5_core", "mlx5_sf_ctrl0@pci:0000:08:00.0", ctl, DirNone, "drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_sf_set_name"},
	{"mlx5_core", "mlx5_sf_comp3@pci:0000:08:00.0", 3, DirBoth, "drivers/net/ethernet/mellanox/mlx5/core/pci_irq.c irq_sf_set_name"},

	{"mlx4_core", "mlx4-async@pci:0000:03:00.0", ctl, DirNone, "drivers/net/ethernet/mellanox/mlx4/eq.c mlx4_init_eq_table"},
	{"mlx4_core", "mlx4_core@pci:0000:03:00.0", ctl, DirNone, "drivers/net/ethernet/mellanox/mlx4/eq.c mlx4_init_eq_table"},
	{"mlx4_core", "mlx4-1@0000:03:00.0", 0, DirBoth, "drivers/net/ethernet/mellanox/mlx4/eq.c mlx4_assign_eq"},
	{"mlx4_core", "mlx4-16@0000:03:00.0", 15, DirBoth, "drivers/net/ethernet/mellanox/mlx4/eq.c mlx4_assign_eq"},

	{"mana", "mana_hwc@pci:7870:00:00.0", ctl, DirNone, "drivers/net/ethernet/microsoft/mana/gdma_main.c mana_gd_setup_irqs"},
	{"mana", "mana_q0@pci:7870:00:00.0", 0, DirBoth, "drivers/net/ethernet/microsoft/mana/gdma_main.c mana_gd_setup_irqs"},
	{"mana", "mana_q15@pci:7870:00:00.0", 15, DirBoth, "drivers/net/ethernet/microsoft/mana/gdma_main.c mana_gd_setup_irqs"},

	// gve's direction depends on the block count: TestClassifyDevices.
	{"gve", "gve-mgmnt@pci:0000:00:04.0", ctl, DirNone, "drivers/net/ethernet/google/gve/gve_main.c gve_alloc_notify_blocks"},
	{"gve", "gve-ntfy-blk0@pci:0000:00:04.0", 0, DirBoth, "drivers/net/ethernet/google/gve/gve_main.c gve_alloc_notify_blocks"},
	{"gve", "gve-ntfy-blk7@pci:0000:00:04.0", 7, DirBoth, "drivers/net/ethernet/google/gve/gve_main.c gve_alloc_notify_blocks"},

	{"ena", "ena-mgmnt@pci:0000:00:05.0", ctl, DirNone, "drivers/net/ethernet/amazon/ena/ena_netdev.c ena_setup_mgmnt_intr"},
	{"ena", "ens5-Tx-Rx-0", 0, DirBoth, "drivers/net/ethernet/amazon/ena/ena_netdev.c ena_setup_io_intr"},
	{"ena", "eth0-Tx-Rx-7", 7, DirBoth, "drivers/net/ethernet/amazon/ena/ena_netdev.c ena_setup_io_intr"},

	{"ice", "ice-0000:3b:00.0:misc", ctl, DirNone, "drivers/net/ethernet/intel/ice/ice_main.c ice_req_irq_msix_misc"},
	{"ice", "ice-0000:3b:00.0:ll_ts", ctl, DirNone, "drivers/net/ethernet/intel/ice/ice_main.c ice_req_irq_msix_misc"},
	{"ice", "ice-0000:3b:00.0:ctrl-TxRx-0", ctl, DirNone, "drivers/net/ethernet/intel/ice/ice_main.c ice_vsi_open_ctrl"},
	{"ice", "ice-ens1f0np0-TxRx-0", 0, DirBoth, "drivers/net/ethernet/intel/ice/ice_main.c ice_vsi_req_irq_msix"},
	{"ice", "ice-enp2s0f4-TxRx-31", 31, DirBoth, "drivers/net/ethernet/intel/ice/ice_main.c ice_vsi_req_irq_msix"},
	{"ice", "ice-wan-rx-2", 2, DirRx, "drivers/net/ethernet/intel/ice/ice_main.c ice_vsi_req_irq_msix"},
	{"ice", "ice-wan-tx-2", 2, DirTx, "drivers/net/ethernet/intel/ice/ice_main.c ice_vsi_req_irq_msix"},

	{"i40e", "i40e-0000:3b:00.0:misc", ctl, DirNone, "drivers/net/ethernet/intel/i40e/i40e_main.c i40e_probe"},
	{"i40e", "i40e-0000:3b:00.1:fdir-TxRx-0", ctl, DirNone, "drivers/net/ethernet/intel/i40e/i40e_main.c i40e_vsi_open"},
	{"i40e", "i40e-enp59s0f1-TxRx-5", 5, DirBoth, "drivers/net/ethernet/intel/i40e/i40e_main.c i40e_vsi_request_irq_msix"},
	{"i40e", "i40e-lan0-rx-1", 1, DirRx, "drivers/net/ethernet/intel/i40e/i40e_main.c i40e_vsi_request_irq_msix"},

	{"iavf", "iavf-0000:5e:02.0:mbx", ctl, DirNone, "drivers/net/ethernet/intel/iavf/iavf_main.c iavf_request_misc_irq"},
	{"iavf", "iavf-enp94s0f0v0-TxRx-3", 3, DirBoth, "drivers/net/ethernet/intel/iavf/iavf_main.c iavf_request_traffic_irqs"},
	{"iavf", "iavf-eth1-tx-0", 0, DirTx, "drivers/net/ethernet/intel/iavf/iavf_main.c iavf_request_traffic_irqs"},

	{"idpf", "idpf-Mailbox-0", ctl, DirNone, "drivers/net/ethernet/intel/idpf/idpf_lib.c idpf_mb_intr_req_irq"},
	{"idpf", "idpf-ens4-TxRx-0", 0, DirBoth, "drivers/net/ethernet/intel/idpf/idpf_txrx.c idpf_vport_intr_req_irq"},
	{"idpf", "idpf-ens4-Rx-9", 9, DirRx, "drivers/net/ethernet/intel/idpf/idpf_txrx.c idpf_vport_intr_req_irq"},
	{"idpf", "idpf-ens4-Tx-9", 9, DirTx, "drivers/net/ethernet/intel/idpf/idpf_txrx.c idpf_vport_intr_req_irq"},

	{"ixgbe", "enp2s0f0", ctl, DirNone, "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c ixgbe_request_msix_irqs"},
	{"ixgbe", "enp2s0f0-TxRx-0", 0, DirBoth, "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c ixgbe_request_msix_irqs"},
	{"ixgbe", "enp2s0f0-rx-1", 1, DirRx, "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c ixgbe_request_msix_irqs"},
	{"ixgbe", "enp2s0f0-tx-1", 1, DirTx, "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c ixgbe_request_msix_irqs"},
	{"ixgbevf", "enp2s16f1-TxRx-1", 1, DirBoth, "drivers/net/ethernet/intel/ixgbevf/ixgbevf_main.c ixgbevf_request_msix_irqs"},
	{"ixgbevf", "enp2s16f1", ctl, DirNone, "drivers/net/ethernet/intel/ixgbevf/ixgbevf_main.c ixgbevf_request_msix_irqs"},
	{"igb", "eno1", ctl, DirNone, "drivers/net/ethernet/intel/igb/igb_main.c igb_request_msix"},
	{"igb", "eno1-TxRx-0", 0, DirBoth, "drivers/net/ethernet/intel/igb/igb_main.c igb_request_msix"},
	{"igb", "eno1-tx-3", 3, DirTx, "drivers/net/ethernet/intel/igb/igb_main.c igb_request_msix"},
	{"igb", "eno1-rx-3", 3, DirRx, "drivers/net/ethernet/intel/igb/igb_main.c igb_request_msix"},
	{"igc", "enp3s0-TxRx-3", 3, DirBoth, "drivers/net/ethernet/intel/igc/igc_main.c igc_request_msix"},
	{"igc", "enp3s0", ctl, DirNone, "drivers/net/ethernet/intel/igc/igc_main.c igc_request_msix"},
	{"e1000e", "enp0s31f6-rx-0", 0, DirRx, "drivers/net/ethernet/intel/e1000e/netdev.c e1000_request_msix"},
	{"e1000e", "enp0s31f6-tx-0", 0, DirTx, "drivers/net/ethernet/intel/e1000e/netdev.c e1000_request_msix"},
	{"e1000e", "enp0s31f6", ctl, DirNone, "drivers/net/ethernet/intel/e1000e/netdev.c e1000_request_msix"},

	// bnxt_en numbers tx after rx: TestClassifyDevices.
	{"bnxt_en", "ens2f0np0-TxRx-0", 0, DirBoth, "drivers/net/ethernet/broadcom/bnxt/bnxt.c bnxt_setup_msix"},
	{"bnxt_en", "ens2f0np0-rx-3", 3, DirRx, "drivers/net/ethernet/broadcom/bnxt/bnxt.c bnxt_setup_msix"},
	{"bnxt_en", "ens2f0np0-tx-11", 11, DirTx, "drivers/net/ethernet/broadcom/bnxt/bnxt.c bnxt_setup_msix"},

	// hns3 counts its TxRx vectors by two.
	{"hns3", "hns3-0000:7d:00.0-TxRx-0", 0, DirBoth, "drivers/net/ethernet/hisilicon/hns3/hns3_enet.c hns3_nic_init_irq"},
	{"hns3", "hns3-0000:7d:00.0-TxRx-2", 1, DirBoth, "drivers/net/ethernet/hisilicon/hns3/hns3_enet.c hns3_nic_init_irq"},
	{"hns3", "hns3-0000:bd:00.1-TxRx-30", 15, DirBoth, "drivers/net/ethernet/hisilicon/hns3/hns3_enet.c hns3_nic_init_irq"},
	{"hns3", "hns3-0000:7d:00.0-Rx-3", 3, DirRx, "drivers/net/ethernet/hisilicon/hns3/hns3_enet.c hns3_nic_init_irq"},
	{"hns3", "hns3-0000:7d:00.0-Tx-3", 3, DirTx, "drivers/net/ethernet/hisilicon/hns3/hns3_enet.c hns3_nic_init_irq"},
	{"hclge", "hclge-misc-0000:7d:00.0", ctl, DirNone, "drivers/net/ethernet/hisilicon/hns3/hns3pf/hclge_main.c hclge_misc_irq_init"},
	{"hclgevf", "hclgevf-misc-0000:7d:01.0", ctl, DirNone, "drivers/net/ethernet/hisilicon/hns3/hns3vf/hclgevf_main.c hclgevf_misc_irq_init"},

	{"sfc", "enp1s0f0np0-0", 0, DirBoth, "drivers/net/ethernet/sfc/efx_channels.c efx_get_channel_name"},
	{"sfc", "enp1s0f0np0-7", 7, DirBoth, "drivers/net/ethernet/sfc/efx_channels.c efx_get_channel_name"},
	{"sfc", "0000:01:00.0-3", 3, DirBoth, "drivers/net/ethernet/sfc/efx_channels.c efx_get_channel_name"},
	{"sfc", "enp1s0f0np0-rx-2", 2, DirRx, "drivers/net/ethernet/sfc/efx_channels.c efx_get_channel_name"},
	{"sfc", "enp1s0f0np0-tx-2", 2, DirTx, "drivers/net/ethernet/sfc/efx_channels.c efx_get_channel_name"},
	{"sfc", "enp1s0f0np0-xdp-0", ctl, DirNone, "drivers/net/ethernet/sfc/efx_channels.c efx_get_channel_name"},
	{"sfc", "enp1s0f0np0-ptp", ctl, DirNone, "drivers/net/ethernet/sfc/ptp.c efx_ptp_get_channel_name"},
	{"sfc", "enp1s0f0np0-mae", ctl, DirNone, "drivers/net/ethernet/sfc/tc_counters.c efx_tc_get_channel_name"},

	{"qed", "sp-0-3b:00.00", ctl, DirNone, "drivers/net/ethernet/qlogic/qed/qed_main.c qed_slowpath_irq_req"},
	{"qed", "sp-1-3b:00.01", ctl, DirNone, "drivers/net/ethernet/qlogic/qed/qed_main.c qed_slowpath_irq_req"},
	{"qed", "3b:00.00", ctl, DirNone, "drivers/net/ethernet/qlogic/qed/qed_main.c qed_slowpath_irq_req"},
	{"qede", "ens1f0-fp-0", 0, DirBoth, "drivers/net/ethernet/qlogic/qede/qede_main.c qede_init_fp"},
	{"qede", "storage-fp-15", 15, DirBoth, "drivers/net/ethernet/qlogic/qede/qede_main.c qede_init_fp"},

	{"cxgb4", "enp2s0f4", ctl, DirNone, "drivers/net/ethernet/chelsio/cxgb4/cxgb4_main.c setup_non_data_intr"},
	{"cxgb4", "enp2s0f4-FWeventq", ctl, DirNone, "drivers/net/ethernet/chelsio/cxgb4/cxgb4_main.c setup_fw_sge_queues"},
	{"cxgb4", "enp2s0f4-Rx0", 0, DirBoth, "drivers/net/ethernet/chelsio/cxgb4/cxgb4_main.c setup_sge_queues"},
	{"cxgb4", "enp2s0f5-Rx7", 7, DirBoth, "drivers/net/ethernet/chelsio/cxgb4/cxgb4_main.c setup_sge_queues"},
	{"cxgb4", "enp2s0f4-mirrorrxq0", ctl, DirNone, "drivers/net/ethernet/chelsio/cxgb4/cxgb4_main.c cxgb4_port_mirror_alloc_queues"},
	{"cxgb4", "enp2s0f4-eorxq1", ctl, DirNone, "drivers/net/ethernet/chelsio/cxgb4/cxgb4_tc_mqprio.c cxgb4_mqprio_alloc_hw_resources"},
	{"cxgb4", "enp2s0f4-chtls0", ctl, DirNone, "drivers/net/ethernet/chelsio/cxgb4/cxgb4_uld.c alloc_uld_rxqs"},

	{"nfp", "ctrl-rxtx-0", ctl, DirNone, "drivers/net/ethernet/netronome/nfp/nfp_net_common.c nfp_net_prepare_vector"},
	{"nfp", "enp4s0np0-rxtx-0", 0, DirBoth, "drivers/net/ethernet/netronome/nfp/nfp_net_common.c nfp_net_prepare_vector"},
	{"nfp", "enp4s0np0-rxtx-7", 7, DirBoth, "drivers/net/ethernet/netronome/nfp/nfp_net_common.c nfp_net_prepare_vector"},
	{"nfp", "enp4s0np0-lsc", ctl, DirNone, "drivers/net/ethernet/netronome/nfp/nfp_net_common.c nfp_net_open_alloc_all"},
	{"nfp", "enp4s0np0-exn", ctl, DirNone, "drivers/net/ethernet/netronome/nfp/nfp_net_common.c nfp_net_open_alloc_all"},

	// ionic's rx IRQ serves tx too unless interrupts are split: TestClassifyDevices.
	{"ionic", "ionic-0000:b5:00.0-L0-admin0", ctl, DirNone, "drivers/net/ethernet/pensando/ionic/ionic_lif.c ionic_qcqs_alloc"},
	{"ionic", "ionic-enp181s0-L0-rx0", 0, DirRx, "drivers/net/ethernet/pensando/ionic/ionic_lif.c ionic_request_irq"},
	{"ionic", "ionic-enp181s0-L0-tx12", 12, DirTx, "drivers/net/ethernet/pensando/ionic/ionic_lif.c ionic_request_irq"},
	{"ionic", "ionic-enp181s0-L0-hwsta", ctl, DirNone, "drivers/net/ethernet/pensando/ionic/ionic_lif.c ionic_request_irq"},

	{"enic", "enp6s0-rx-0", 0, DirRx, "drivers/net/ethernet/cisco/enic/enic_main.c enic_request_intr"},
	{"enic", "enp6s0-tx-0", 0, DirTx, "drivers/net/ethernet/cisco/enic/enic_main.c enic_request_intr"},
	{"enic", "enp6s0-err", ctl, DirNone, "drivers/net/ethernet/cisco/enic/enic_main.c enic_request_intr"},
	{"enic", "enp6s0-notify", ctl, DirNone, "drivers/net/ethernet/cisco/enic/enic_main.c enic_request_intr"},

	// tg3 names by vector; vector 0 has no rx ring with RSS: TestClassifyDevices.
	{"tg3", "eth0-txrx-1", 1, DirBoth, "drivers/net/ethernet/broadcom/tg3.c tg3_request_irq"},
	{"tg3", "eth0-tx-0", 0, DirTx, "drivers/net/ethernet/broadcom/tg3.c tg3_request_irq"},
	{"tg3", "eth0-rx-1", 1, DirRx, "drivers/net/ethernet/broadcom/tg3.c tg3_request_irq"},

	{"vmxnet3", "ens192-rxtx-0", 0, DirBoth, "drivers/net/vmxnet3/vmxnet3_drv.c vmxnet3_request_irqs"},
	{"vmxnet3", "ens192-tx-0", 0, DirTx, "drivers/net/vmxnet3/vmxnet3_drv.c vmxnet3_request_irqs"},
	{"vmxnet3", "ens192-rx-4", 4, DirRx, "drivers/net/vmxnet3/vmxnet3_drv.c vmxnet3_request_irqs"},
	{"vmxnet3", "ens192-event-8", ctl, DirNone, "drivers/net/vmxnet3/vmxnet3_drv.c vmxnet3_request_irqs"},

	{"be2net", "eth0-q0", 0, DirBoth, "drivers/net/ethernet/emulex/benet/be_main.c be_msix_register"},
	{"be2net", "enp4s0f0-q7", 7, DirBoth, "drivers/net/ethernet/emulex/benet/be_main.c be_msix_register"},

	{"liquidio", "LiquidIO0-pf0-rxtx-0", 0, DirBoth, "drivers/net/ethernet/cavium/liquidio/lio_core.c octeon_setup_interrupt"},
	{"liquidio", "LiquidIO1-vf3-rxtx-7", 7, DirBoth, "drivers/net/ethernet/cavium/liquidio/lio_core.c octeon_setup_interrupt"},
	{"liquidio", "LiquidIO0-pf0-aux", ctl, DirNone, "drivers/net/ethernet/cavium/liquidio/lio_core.c octeon_setup_interrupt"},

	{"octeontx2", "eth2-rxtx-0", 0, DirBoth, "drivers/net/ethernet/marvell/octeontx2/nic/otx2_pf.c otx2_open"},
	{"octeontx2", "eth2-qerr", ctl, DirNone, "drivers/net/ethernet/marvell/octeontx2/nic/otx2_pf.c otx2_open"},
	{"octeontx2", "RVUPF1_ME0", ctl, DirNone, "drivers/net/ethernet/marvell/octeontx2/nic/otx2_pf.c otx2_register_flr_me_intr"},
	{"octeontx2", "RVUPF_VF Mbox0", ctl, DirNone, "drivers/net/ethernet/marvell/octeontx2/nic/otx2_pf.c otx2_register_pfvf_mbox_intr"},

	{"hinic", "enp7s0_rxq0", 0, DirRx, "drivers/net/ethernet/huawei/hinic/hinic_rx.c hinic_init_rxq"},
	{"hinic", "enp7s0_txq0", 0, DirTx, "drivers/net/ethernet/huawei/hinic/hinic_tx.c hinic_init_txq"},
	{"hinic", "enp7s0_rxq15", 15, DirRx, "drivers/net/ethernet/huawei/hinic/hinic_rx.c hinic_init_rxq"},
	{"hinic", "hinic_aeq0@pci:0000:07:00.0", ctl, DirNone, "drivers/net/ethernet/huawei/hinic/hinic_hw_eqs.c init_eq"},
	{"hinic", "hinic_ceq3@pci:0000:07:00.0", ctl, DirNone, "drivers/net/ethernet/huawei/hinic/hinic_hw_eqs.c init_eq"},
	// hinic3 is newer than 6.12: torvalds/linux master.
	{"hinic3", "enp7s0_qp0", 0, DirBoth, "drivers/net/ethernet/huawei/hinic3/hinic3_irq.c hinic3_qps_irq_init"},
	{"hinic3", "enp7s0_qp11", 11, DirBoth, "drivers/net/ethernet/huawei/hinic3/hinic3_irq.c hinic3_qps_irq_init"},
	{"hinic3", "hinic3_ceq0@pci:0000:07:00.0", ctl, DirNone, "drivers/net/ethernet/huawei/hinic3/hinic3_eqs.c request_eq_irq"},

	// Storage HBAs as real hosts name them (testdata/hosts/sources;
	// lpfc: performancecopilot/pcp qa/linux/interrupts-1152cpu-x86_64),
	// mpt3sas and aacraid as their format strings do; those without an
	// index get theirs from the vector order: TestClassifyDevices.
	{"hpsa", "hpsa0-msix0", 0, DirBoth, "drivers/scsi/hpsa.c hpsa_request_irqs"},
	{"hpsa", "hpsa2-msix31", 31, DirBoth, "drivers/scsi/hpsa.c hpsa_request_irqs"},
	{"mpt2sas", "mpt2sas0-msix0", 0, DirBoth, "drivers/scsi/mpt3sas/mpt3sas_base.c _base_request_irq"},
	{"mpt3sas", "mpt3sas1-msix15", 15, DirBoth, "drivers/scsi/mpt3sas/mpt3sas_base.c _base_request_irq"},
	{"megaraid_sas", "megasas0-msix40", 40, DirBoth, "drivers/scsi/megaraid/megaraid_sas_base.c megasas_setup_irqs_msix"},
	{"megaraid_sas", "megasas", 0, DirBoth, "drivers/scsi/megaraid/megaraid_sas_base.c megasas_probe_one"},
	{"smartpqi", "smartpqi", 0, DirBoth, "drivers/scsi/smartpqi/smartpqi_init.c pqi_request_irqs"},
	{"aacraid", "aacraid", 0, DirBoth, "drivers/scsi/aacraid/commsup.c aac_acquire_irq"},
	{"lpfc", "lpfc:0", 0, DirBoth, "drivers/scsi/lpfc/lpfc_init.c lpfc_sli4_enable_msix"},
	{"lpfc", "lpfc:135", 135, DirBoth, "drivers/scsi/lpfc/lpfc_init.c lpfc_sli4_enable_msix"},
	{"ccp", "ccp-1", ctl, DirNone, "drivers/crypto/ccp/ccp-dev.c ccp_alloc_struct"},
	{"ccp", "psp-3", ctl, DirNone, "drivers/crypto/ccp/psp-dev.c psp_alloc_struct"},
	{"ahci", "0000:00:17.0", ctl, DirNone, "drivers/ata/libata-core.c ata_host_activate"},
	{"bnx2", "em1-0", 0, DirBoth, "drivers/net/ethernet/broadcom/bnx2.c bnx2_enable_msix"},
	{"bnx2", "em2-7", 7, DirBoth, "drivers/net/ethernet/broadcom/bnx2.c bnx2_enable_msix"},
}

// ruleFor is the built-in rule that decides name, nil when none matches.
func ruleFor(name string) *nameRule {
	for i := range builtinRules {
		if builtinRules[i].re.MatchString(name) {
			return &builtinRules[i]
		}
	}
	return nil
}

// TestDriverNames checks each driver's real names, and that the rule
// deciding a name is that driver's (or a generic one): no driver's
// rule misfires on another's names.
func TestDriverNames(t *testing.T) {
	drivers := map[string]bool{}
	for _, tt := range driverNames {
		drivers[tt.driver] = true
		t.Run(tt.driver+"/"+tt.name, func(t *testing.T) {
			c, _ := classifyAction(tt.name)
			want := class{role: RoleQueue, queue: tt.queue, dir: tt.dir}
			if tt.queue == ctl {
				want = class{role: RoleControl, queue: -1, dir: DirNone}
			}
			if c != want {
				t.Errorf("classifyAction(%q) = %+v; want %+v", tt.name, c, want)
			}
			r := ruleFor(tt.name)
			if r == nil {
				if tt.queue != ctl {
					t.Fatalf("no rule matches queue name %q", tt.name)
				}
				return
			}
			if owners := strings.Split(r.drivers, ","); !slices.Contains(owners, tt.driver) && !slices.Contains(owners, "any") {
				t.Errorf("%q is decided by the rule of %s (%s), not %s's", tt.name, r.drivers, r.re, tt.driver)
			}
			fn := tt.src[strings.LastIndexByte(tt.src, ' ')+1:]
			if !strings.Contains(r.cite, fn) && r.drivers != "any" {
				t.Errorf("%q: its rule cites %q, not %s", tt.name, r.cite, fn)
			}
		})
	}
	if len(drivers) < 20 {
		t.Errorf("%d drivers in the table, want at least 20", len(drivers))
	}
}

// TestBuiltinRules checks the table itself: queue rules have a queue
// group (or number by vector order) and a direction, step and base are
// sane, every rule cites.
func TestBuiltinRules(t *testing.T) {
	for _, r := range builtinRules {
		queue := r.re.SubexpIndex("queue") >= 0 || r.layout == layoutOrder
		switch {
		case r.drivers == "" || r.cite == "":
			t.Errorf("%s: no drivers or citation", r.re)
		case queue && (r.dir == DirNone || r.step < 1 || r.base < 0):
			t.Errorf("%s: queue rule with dir %v, step %d, base %d", r.re, r.dir, r.step, r.base)
		case !queue && (r.dir != DirNone || r.re.SubexpIndex("dir") >= 0 || r.layout != layoutPlain):
			t.Errorf("%s: control rule with a direction or layout", r.re)
		}
		if i := r.re.SubexpIndex("dir"); i >= 0 {
			words := regexp.MustCompile(`\(\?P<dir>([^)]*)\)`).FindStringSubmatch(r.re.String())
			for _, w := range strings.Split(words[1], "|") {
				if _, ok := dirWords[w]; !ok {
					t.Errorf("%s: dir word %q has no direction", r.re, w)
				}
			}
		}
	}
}

// TestClassifyDevices: what depends on a device's other IRQs, and how
// per-direction IRQs of one queue pair up after normalisation.
func TestClassifyDevices(t *testing.T) {
	tests := []struct {
		name string
		irqs []string
		want []class
	}{
		{
			name: "ixgbe rx and tx of a queue share its index",
			irqs: []string{"eth0", "eth0-rx-0", "eth0-rx-1", "eth0-tx-0", "eth0-tx-1"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirRx}, {role: RoleQueue, queue: 1, dir: DirRx}, {role: RoleQueue, queue: 0, dir: DirTx}, {role: RoleQueue, queue: 1, dir: DirTx}},
		},
		{
			// bnxt.c bnxt_setup_msix: i < rx_nr_rings ? rx : tx, one count
			name: "bnxt_en numbers tx vectors after rx",
			irqs: []string{"ens2f0np0-rx-0", "ens2f0np0-rx-1", "ens2f0np0-tx-2", "ens2f0np0-tx-3"},
			want: []class{{role: RoleQueue, queue: 0, dir: DirRx}, {role: RoleQueue, queue: 1, dir: DirRx}, {role: RoleQueue, queue: 0, dir: DirTx}, {role: RoleQueue, queue: 1, dir: DirTx}},
		},
		{
			// vmxnet3_drv.c vmxnet3_request_irqs: vector++ over tx then rx
			name: "vmxnet3 numbers rx vectors after tx",
			irqs: []string{"ens192-tx-0", "ens192-tx-1", "ens192-rx-2", "ens192-rx-3", "ens192-event-4"},
			want: []class{{role: RoleQueue, queue: 0, dir: DirTx}, {role: RoleQueue, queue: 1, dir: DirTx}, {role: RoleQueue, queue: 0, dir: DirRx}, {role: RoleQueue, queue: 1, dir: DirRx}, {role: RoleControl, queue: -1, dir: DirNone}},
		},
		{
			// ice_main.c ice_vsi_req_irq_msix: TxRx bumps rx_int_idx and tx_int_idx
			name: "ice more tx than combined vectors keeps the tx count",
			irqs: []string{"ice-0000:3b:00.0:misc", "ice-eth0-TxRx-0", "ice-eth0-TxRx-1", "ice-eth0-tx-2", "ice-eth0-tx-3"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}, {role: RoleQueue, queue: 2, dir: DirTx}, {role: RoleQueue, queue: 3, dir: DirTx}},
		},
		{
			// gve.h gve_rx_idx_to_ntfy: num_ntfy_blks / 2 + queue
			name: "gve tx blocks first, rx blocks second half",
			irqs: []string{"gve-mgmnt@pci:0000:00:04.0", "gve-ntfy-blk0@pci:0000:00:04.0", "gve-ntfy-blk1@pci:0000:00:04.0", "gve-ntfy-blk2@pci:0000:00:04.0", "gve-ntfy-blk3@pci:0000:00:04.0"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirTx}, {role: RoleQueue, queue: 1, dir: DirTx}, {role: RoleQueue, queue: 0, dir: DirRx}, {role: RoleQueue, queue: 1, dir: DirRx}},
		},
		{
			// ionic_lif.c ionic_txrx_alloc: tx gets IONIC_QCQ_F_INTR only with IONIC_LIF_F_SPLIT_INTR
			name: "ionic rx serves tx without split interrupts",
			irqs: []string{"ionic-0000:b5:00.0-L0-admin0", "ionic-eth0-L0-rx0", "ionic-eth0-L0-rx1"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}},
		},
		{
			name: "ionic split interrupts",
			irqs: []string{"ionic-eth0-L0-tx0", "ionic-eth0-L0-tx1", "ionic-eth0-L0-rx0", "ionic-eth0-L0-rx1"},
			want: []class{{role: RoleQueue, queue: 0, dir: DirTx}, {role: RoleQueue, queue: 1, dir: DirTx}, {role: RoleQueue, queue: 0, dir: DirRx}, {role: RoleQueue, queue: 1, dir: DirRx}},
		},
		{
			// tg3.c tg3_request_irq, tg3_mem_rx_acquire: no rx return ring on vector 0 with RSS
			name: "tg3 RSS: tx on vector 0, rx from vector 1",
			irqs: []string{"eth0-tx-0", "eth0-rx-1", "eth0-rx-2", "eth0-rx-3"},
			want: []class{{role: RoleQueue, queue: 0, dir: DirTx}, {role: RoleQueue, queue: 0, dir: DirRx}, {role: RoleQueue, queue: 1, dir: DirRx}, {role: RoleQueue, queue: 2, dir: DirRx}},
		},
		{
			// tg3.c tg3_request_irq: "%s-%d" for a vector with neither ring
			name: "tg3 RSS and TSS: vector 0 has no ring",
			irqs: []string{"eth0-0", "eth0-txrx-1", "eth0-txrx-2"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}},
		},
		{
			name: "sfc combined channels and ptp",
			irqs: []string{"eth0-0", "eth0-1", "eth0-2", "eth0-ptp"},
			want: []class{{role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}, {role: RoleQueue, queue: 2, dir: DirBoth}, {role: RoleControl, queue: -1, dir: DirNone}},
		},
		{
			name: "hns3 TxRx counted by two",
			irqs: []string{"hclge-misc-0000:7d:00.0", "hns3-0000:7d:00.0-TxRx-0", "hns3-0000:7d:00.0-TxRx-2", "hns3-0000:7d:00.0-TxRx-4"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}, {role: RoleQueue, queue: 2, dir: DirBoth}},
		},
		{
			name: "mlx4 completion EQs from vector 1",
			irqs: []string{"mlx4-async@pci:0000:03:00.0", "mlx4-1@0000:03:00.0", "mlx4-2@0000:03:00.0"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}},
		},
		{
			// smartpqi_init.c pqi_request_irqs: vector i serves queue_groups[i]
			name: "smartpqi names no queue: the vector order is",
			irqs: []string{"smartpqi", "smartpqi", "smartpqi", "smartpqi"},
			want: []class{{role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}, {role: RoleQueue, queue: 2, dir: DirBoth}, {role: RoleQueue, queue: 3, dir: DirBoth}},
		},
		{
			name: "psp and ccp of one device are control",
			irqs: []string{"psp-1", "ccp-1"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleControl, queue: -1, dir: DirNone}},
		},
		{
			name: "qed slow path and qede fast path",
			irqs: []string{"sp-0-3b:00.00", "ens1f0-fp-0", "ens1f0-fp-1"},
			want: []class{{role: RoleControl, queue: -1, dir: DirNone}, {role: RoleQueue, queue: 0, dir: DirBoth}, {role: RoleQueue, queue: 1, dir: DirBoth}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var irqs []inventory.IRQ
			for i, n := range tt.irqs {
				irqs = append(irqs, inventory.IRQ{Number: 100 + i, Device: "0000:01:00.0", Actions: []string{n}})
			}
			if got := classify(irqs, nil); !slices.Equal(got, tt.want) {
				t.Errorf("classify(%q) =\n%+v\nwant\n%+v", tt.irqs, got, tt.want)
			}
		})
	}
}

// TestClassifyDevicesProperties: over every pair of drivers' names put
// on one device, control IRQs have queue -1 and no direction, queues a
// direction and an index >= 0, and the lowest index is 0.
func TestClassifyDevicesProperties(t *testing.T) {
	byDriver := map[string][]string{}
	for _, n := range driverNames {
		byDriver[n.driver] = append(byDriver[n.driver], n.name)
	}
	for a, an := range byDriver {
		for b, bn := range byDriver {
			var irqs []inventory.IRQ
			for i, n := range append(slices.Clone(an), bn...) {
				irqs = append(irqs, inventory.IRQ{Number: i, Actions: []string{n}})
			}
			if err := classProperties(classify(irqs, nil)); err != nil {
				t.Errorf("%s+%s: %v", a, b, err)
			}
		}
	}
}

func classProperties(cs []class) error {
	low := -1
	for _, c := range cs {
		switch {
		case c.role == RoleControl && (c.queue != -1 || c.dir != DirNone):
			return fmt.Errorf("control %+v", c)
		case c.role == RoleQueue && (c.queue < 0 || c.dir == DirNone):
			return fmt.Errorf("queue %+v", c)
		case c.role != RoleQueue && c.role != RoleControl:
			return fmt.Errorf("role %+v", c)
		}
		if c.role == RoleQueue && (low < 0 || c.queue < low) {
			low = c.queue
		}
	}
	if low > 0 {
		return fmt.Errorf("lowest queue %d", low)
	}
	return nil
}

// TestDirectionPicksTheIRQ: XPS and NAPI pick by direction: tx queue k
// and a TX NAPI follow the combined or tx IRQ of index k, an RX NAPI the
// combined or rx one; never one of the other direction only.
func TestDirectionPicksTheIRQ(t *testing.T) {
	tests := []struct {
		name   string
		irqs   []string
		tx, rx []string // per queue k: the IRQ tx queue k / rx queue k follows
	}{
		{
			name: "bnxt_en split rings",
			irqs: []string{"eth0-rx-0", "eth0-rx-1", "eth0-tx-2", "eth0-tx-3"},
			tx:   []string{"eth0-tx-2", "eth0-tx-3"},
			rx:   []string{"eth0-rx-0", "eth0-rx-1"},
		},
		{
			name: "gve halves",
			irqs: []string{"gve-mgmnt@pci:0000:00:04.0", "gve-ntfy-blk0@pci:0000:00:04.0", "gve-ntfy-blk1@pci:0000:00:04.0", "gve-ntfy-blk2@pci:0000:00:04.0", "gve-ntfy-blk3@pci:0000:00:04.0"},
			tx:   []string{"gve-ntfy-blk0@pci:0000:00:04.0", "gve-ntfy-blk1@pci:0000:00:04.0"},
			rx:   []string{"gve-ntfy-blk2@pci:0000:00:04.0", "gve-ntfy-blk3@pci:0000:00:04.0"},
		},
		{
			name: "ionic without split interrupts: rx IRQs complete tx",
			irqs: []string{"ionic-0000:b5:00.0-L0-admin0", "ionic-eth0-L0-rx0", "ionic-eth0-L0-rx1"},
			tx:   []string{"ionic-eth0-L0-rx0", "ionic-eth0-L0-rx1"},
			rx:   []string{"ionic-eth0-L0-rx0", "ionic-eth0-L0-rx1"},
		},
		{
			name: "virtio rx listed before tx",
			irqs: []string{"virtio0-config", "virtio0-input.0", "virtio0-output.0"},
			tx:   []string{"virtio0-output.0"},
			rx:   []string{"virtio0-input.0"},
		},
		{
			name: "ice combined",
			irqs: []string{"ice-0000:3b:00.0:misc", "ice-eth0-TxRx-0"},
			tx:   []string{"ice-eth0-TxRx-0"},
			rx:   []string{"ice-eth0-TxRx-0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inv []inventory.IRQ
			for i, n := range tt.irqs {
				inv = append(inv, inventory.IRQ{Number: 100 + i, Name: n, Actions: []string{n}})
			}
			d := &Device{}
			for i, c := range classify(inv, nil) {
				d.IRQs = append(d.IRQs, IRQ{Number: inv[i].Number, Name: inv[i].Name, Role: c.role, Queue: c.queue, Dir: c.dir})
			}
			for k, want := range tt.tx {
				if q, ok := completionIRQ(d, k); !ok || q.Name != want {
					t.Errorf("tx queue %d completes on %q (%v), want %q", k, q.Name, ok, want)
				}
				if q, ok, why := threadIRQ(d, inventory.NAPIThread{IRQ: -1, Queue: k, Kind: napi.KindTX}); !ok || q.Name != want {
					t.Errorf("TX NAPI %d follows %q (%s), want %q", k, q.Name, why, want)
				}
			}
			for k, want := range tt.rx {
				if q, ok, why := threadIRQ(d, inventory.NAPIThread{IRQ: -1, Queue: k, Kind: napi.KindRX}); !ok || q.Name != want {
					t.Errorf("RX NAPI %d follows %q (%s), want %q", k, q.Name, why, want)
				}
			}
		})
	}
}
