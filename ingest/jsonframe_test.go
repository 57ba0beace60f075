package ingest

import (
	"math/rand/v2"
	"testing"
)

// scan finds the same end with and without gathering the bytes, whatever
// the strings, escapes and the lines a record is cut into.
func TestScanSkipsStringsAsItReadsThem(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "\"\\{}[]a :"
	for n := 0; n < 20_000; n++ {
		b := make([]byte, rng.IntN(60))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cut := rng.IntN(len(b) + 1)
		var fast, slow jsonScanner
		var out []byte
		gotFast, gotSlow := fast.scan(b[:cut], nil), slow.scan(b[:cut], &out)
		if gotFast < 0 && gotSlow < 0 {
			gotFast, gotSlow = fast.scan(b[cut:], nil), slow.scan(b[cut:], &out)
		}
		if gotFast != gotSlow || fast != slow {
			t.Fatalf("%q cut at %d: end %d, state %+v without gathering; %d, %+v with", b, cut, gotFast, fast, gotSlow, slow)
		}
	}
}
