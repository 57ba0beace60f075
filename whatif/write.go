package whatif

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// WriteText writes res as text tables: every request's figures recorded
// and modeled, then one line per segment, then the assumptions.
func WriteText(w io.Writer, res *Result) error {
	fmt.Fprintf(w, "What if: %s\n", res.Policy)
	fmt.Fprintf(w, "Model: %s; every %q figure comes from the model, not from traces.\n\n", res.Model, res.Label)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rec, mod := res.Overall.Recorded, res.Overall.Modeled
	fmt.Fprintf(tw, "all %d requests\trecorded\tmodeled\tchange\n", rec.Requests)
	for _, l := range []struct {
		name     string
		rec, mod string
		change   string
	}{
		{"attempts", strconv.Itoa(rec.Attempts), strconv.Itoa(mod.Attempts), change(float64(rec.Attempts), float64(mod.Attempts))},
		{"amplification", fixed(rec.Amplification, 3), fixed(mod.Amplification, 3), change(rec.Amplification, mod.Amplification)},
		{"final failure rate", share(&rec.FinalFailureRate), share(&mod.FinalFailureRate), points(&rec.FinalFailureRate, &mod.FinalFailureRate)},
		{"retry success rate", share(rec.RetrySuccessRate), share(mod.RetrySuccessRate), points(rec.RetrySuccessRate, mod.RetrySuccessRate)},
		{"p50 latency ms", ms(rec.P50), ms(mod.P50), changeOf(rec.P50, mod.P50)},
		{"p95 latency ms", ms(rec.P95), ms(mod.P95), changeOf(rec.P95, mod.P95)},
		{"p99 latency ms", ms(rec.P99), ms(mod.P99), changeOf(rec.P99, mod.P99)},
		{"tokens", strconv.FormatInt(rec.Tokens, 10), strconv.FormatInt(mod.Tokens, 10), change(float64(rec.Tokens), float64(mod.Tokens))},
		{"offered load λ·S", fixed(rec.OfferedLoad, 2), fixed(mod.OfferedLoad, 2), change(rec.OfferedLoad, mod.OfferedLoad)},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.name, l.rec, l.mod, l.change)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "segment\trequests\tamplification\tmodeled\tfailure\tmodeled\tp99 ms\tmodeled")
	for _, s := range res.Segments {
		rec, mod := s.Recorded, s.Modeled
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", strings.Join([]string{s.Segment.Service, s.Segment.Operation, s.Segment.Route}, " / "),
			rec.Requests, fixed(rec.Amplification, 3), fixed(mod.Amplification, 3), share(&rec.FinalFailureRate), share(&mod.FinalFailureRate),
			ms(rec.P99), ms(mod.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nAssumptions:")
	for _, a := range res.Assumptions {
		fmt.Fprintf(w, "  - %s\n", a)
	}
	return nil
}

// change is the relative change from rec to mod, "-" when rec is 0.
func change(rec, mod float64) string {
	if rec == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(mod-rec)/rec)
}

func changeOf(rec, mod *float64) string {
	if rec == nil || mod == nil {
		return "-"
	}
	return change(*rec, *mod)
}

// points is the change of a share in percentage points.
func points(rec, mod *float64) string {
	if rec == nil || mod == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f pp", 100*(*mod-*rec))
}

func fixed(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

func share(v *float64) string {
	if v == nil {
		return "-"
	}
	return fixed(100**v, 1) + "%"
}

func ms(v *float64) string {
	if v == nil {
		return "-"
	}
	return fixed(*v, 0)
}
