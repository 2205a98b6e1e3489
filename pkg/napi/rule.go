//go:build linux

package napi

import "sort"

// driverVirtioNet is virtio-net's driver name in sysfs.
const driverVirtioNet = "virtio_net"

// applyDriverRule fills Queue and Kind of one interface's threads where
// its driver's rule knows them (see the package doc). It leaves them
// unknown when the rule's premise fails: an id lost to a cut name.
func applyDriverRule(driver string, ts []Thread) {
	if driver != driverVirtioNet {
		return
	}
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
