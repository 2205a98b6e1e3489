package napi

import "sort"

// driverVirtioNet is virtio-net's driver name in sysfs.
const driverVirtioNet = "virtio_net"

// applyDriverRule fills Queue and Kind of one interface's threads.
func applyDriverRule(driver string, ts []Thread) {
	if driver != driverVirtioNet {
		return
	}
	virtioRX(ts)
	virtioTX(ts)
}

// virtioRX gives RX queue k to the k-th smallest NAPI id, as virtio-net
// adds rq[0..max-1] in order. A cut id leaves every queue unknown.
func virtioRX(ts []Thread) {
	var rx []*Thread
	for i := range ts {
		switch {
		case ts[i].NAPIID < 0:
			return
		case ts[i].NAPIID > 0:
			rx = append(rx, &ts[i])
		}
	}
	sort.Slice(rx, func(i, j int) bool { return rx[i].NAPIID < rx[j].NAPIID })
	for k, t := range rx {
		t.Queue, t.Kind = k, KindRX
	}
}

// virtioTX gives TX queue k to the thread created just before RX queue
// k's: threaded = 1 makes sq[max-1], rq[max-1], ..., sq[0], rq[0]. Pids
// not alternating TX, RX with RX queues falling leave TX unknown.
func virtioTX(ts []Thread) {
	byPID := make([]*Thread, len(ts))
	for i := range ts {
		byPID[i] = &ts[i]
	}
	sort.Slice(byPID, func(i, j int) bool { return byPID[i].PID < byPID[j].PID })
	if len(byPID)%2 != 0 {
		return
	}
	for i := 0; i < len(byPID); i += 2 {
		tx, rx := byPID[i], byPID[i+1]
		if tx.NAPIID != 0 || rx.Kind != KindRX || (i > 0 && rx.Queue >= byPID[i-1].Queue) {
			return
		}
	}
	for i := 0; i < len(byPID); i += 2 {
		byPID[i].Queue, byPID[i].Kind = byPID[i+1].Queue, KindTX
	}
}
