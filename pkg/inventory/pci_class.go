package inventory

import "strconv"

// pciBaseClasses name the PCI base classes of multi-queue devices.
var pciBaseClasses = map[uint64]string{
	0x01: "storage",
	0x02: "network",
	0x03: "display",
	0x04: "multimedia",
	0x0c: "serial bus",
	0x12: "accelerator",
}

// ClassName names a PCI class as sysfs prints it ("0x020000" is
// "network"); "" for one it does not know.
func ClassName(class string) string {
	if len(class) != 8 || class[:2] != "0x" {
		return ""
	}
	v, err := strconv.ParseUint(class[2:], 16, 32)
	if err != nil {
		return ""
	}
	return pciBaseClasses[v>>16]
}
