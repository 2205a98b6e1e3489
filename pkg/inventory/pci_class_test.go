package inventory

import "testing"

func TestClassName(t *testing.T) {
	for class, want := range map[string]string{
		"0x020000": "network",
		"0x010802": "storage", // NVMe
		"0x120000": "accelerator",
		"0x000000": "",
		"0x0200":   "",
		"0xzz0000": "",
		"":         "",
	} {
		if got := ClassName(class); got != want {
			t.Errorf("ClassName(%q) = %q, want %q", class, got, want)
		}
	}
}
