package rebuild

import (
	"fmt"
	"testing"
)

// FuzzCutCycles runs the loop cutting alone on arbitrary parent links (two
// bytes a span: its id and its parent's, 0 for none; ids repeat), fast
// enough for millions of inputs: afterwards every chain of parents ends,
// and only spans that were in a loop lost their parent.
func FuzzCutCycles(f *testing.F) {
	f.Add([]byte{1, 2, 2, 3, 3, 1})       // a loop of three
	f.Add([]byte{1, 1, 2, 1})             // a self-parent and its child
	f.Add([]byte{1, 2, 2, 1, 3, 4, 4, 3}) // two loops
	f.Add([]byte{1, 9, 2, 1, 2, 2})       // a missing parent, a repeated id
	f.Fuzz(func(t *testing.T, data []byte) {
		var trace []*span
		for i := 0; i+1 < len(data) && len(trace) < 64; i += 2 {
			s := &span{traceID: "t", spanID: fmt.Sprint(data[i] % 16), start: int64(data[i+1])}
			if p := data[i+1] % 17; p > 0 {
				s.parentID = fmt.Sprint(p - 1)
			}
			trace = append(trace, s)
		}
		before := map[*span]string{}
		for _, s := range trace {
			before[s] = s.parentID
		}
		cuts := cutCycles(trace)
		byID := map[string]*span{}
		for _, s := range trace {
			byID[s.spanID] = s
		}
		for _, s := range trace {
			seen := map[*span]bool{}
			for cur := s; cur != nil; cur = byID[cur.parentID] {
				if seen[cur] {
					t.Fatalf("a loop is left through span %s (cuts %v)", cur.spanID, cuts)
				}
				seen[cur] = true
				if cur.parentID == "" {
					break
				}
			}
		}
		changed := 0
		for _, s := range trace {
			if s.parentID != before[s] {
				changed++
			}
		}
		if changed != len(cuts) {
			t.Fatalf("%d parents changed, %d cuts reported", changed, len(cuts))
		}
	})
}
