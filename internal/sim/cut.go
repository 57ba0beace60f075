package sim

import "go.opentelemetry.io/collector/pdata/ptrace"

// CutByEnd splits spans into len(cuts)+1 parts by end time: a span ending
// before cuts[0] goes to the first part, before cuts[1] to the second, and
// so on. Traces then straddle the cuts the way they straddle midnight
// between two nightly dumps. The batches are left as they were.
func CutByEnd(batches []ptrace.Traces, cuts []uint64) []ptrace.Traces {
	parts := make([]ptrace.Traces, len(cuts)+1)
	for i := range parts {
		parts[i] = ptrace.NewTraces()
	}
	for _, td := range batches {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					p := 0
					for p < len(cuts) && uint64(sp.EndTimestamp()) >= cuts[p] {
						p++
					}
					dst := parts[p].ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(dst.Resource())
					dss := dst.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(dss.Scope())
					sp.CopyTo(dss.Spans().AppendEmpty())
				}
			}
		}
	}
	return parts
}
