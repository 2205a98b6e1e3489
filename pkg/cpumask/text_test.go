package cpumask_test

import (
	"encoding/json"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// TestMaskJSON: a Mask is a JSON string in the list format, "" when
// empty, and reads back equal; a malformed string is an error that
// leaves the mask as it was.
func TestMaskJSON(t *testing.T) {
	type doc struct {
		A cpumask.Mask   `json:"a"`
		B cpumask.Mask   `json:"b"`
		C []cpumask.Mask `json:"c"`
	}
	in := doc{A: cpumask.New(0, 1, 2, 3, 8, 10, 11), C: []cpumask.Mask{cpumask.New(64), {}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a":"0-3,8,10-11","b":"","c":["64",""]}`
	if string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !out.A.Equal(in.A) || !out.B.IsEmpty() || len(out.C) != 2 || !out.C[0].Equal(in.C[0]) || !out.C[1].IsEmpty() {
		t.Errorf("Unmarshal = %+v, want %+v", out, in)
	}
	keep := cpumask.New(5)
	if err := json.Unmarshal([]byte(`"3-1"`), &keep); err == nil || !keep.Equal(cpumask.New(5)) {
		t.Errorf(`Unmarshal "3-1" = %v, mask %v; want an error and 5 kept`, err, keep)
	}
}
