package texttab

import (
	"strings"
	"testing"
)

// TestFormatMs: durations read as the doc comment promises, three
// significant digits in the unit a person reads.
func TestFormatMs(t *testing.T) {
	for ms, want := range map[float64]string{4.512: "4.51 ms", 90.23: "90.2 ms", 1234: "1.23 s", 12_000: "12.0 s",
		210_000: "3.5 min", 4_380_000: "73 min", 9_000_000: "2.5 h", 0: "0 ms", -1500: "-1.50 s"} {
		if got := FormatMs(ms); got != want {
			t.Errorf("FormatMs(%v) = %q, want %q", ms, got, want)
		}
	}
}

// TestWriters: the text writer aligns labels left and figures right and
// shows each group as a table; CSV writes every column, a range as _lo
// and _hi, missing figures empty.
func TestWriters(t *testing.T) {
	tab := Table{Title: "T", Labels: 1,
		Columns: []Column{{Key: "name", Head: "name"}, {Key: "n", Head: "n"}, {Key: "p99_range", Head: "p99"}},
		Rows: [][]Cell{
			{Label("alpha"), Int(12), {Unit: Ms, V: 1, Hi: 2, Range: true}},
			{Label("b"), Maybe(Count, nil), {Unit: Ms, Range: true, Missing: true}},
		},
		Groups: []Group{{Title: "T: counts", Keys: []string{"n"}, Heads: []string{"count"}}},
		Notes:  []string{"a note"},
	}
	var text strings.Builder
	if err := WriteText(&text, "head\n", tab); err != nil {
		t.Fatal(err)
	}
	if want := "head\n\nT: counts\n  name   count\n  alpha     12\n  b          -\n  a note\n"; text.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, tab); err != nil {
		t.Fatal(err)
	}
	if want := "name,n,p99_lo,p99_hi\nalpha,12,1,2\nb,,,\n"; csv.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", csv.String(), want)
	}
}
