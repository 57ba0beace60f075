package report

import (
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
)

// perRequest is a figure per logical request: nothing to show without
// requests (JSON keeps its 0).
func perRequest(u texttab.Unit, v float64, requests int) texttab.Cell {
	if requests == 0 {
		return texttab.Cell{Unit: u, Missing: true}
	}
	return texttab.Cell{Unit: u, V: v}
}

// pct is the pct-th percentile of s in unit u, or why it is missing.
func pct(u texttab.Unit, s model.Summary, p int) texttab.Cell {
	if v := s.Pct(p); v != nil {
		return texttab.Cell{Unit: u, V: *v}
	}
	c := texttab.Cell{Unit: u, Missing: true}
	if s.N > 0 {
		c.MinN = model.DefaultRule.MinN(p)
	}
	return c
}

// ci is the bootstrap interval of the pct-th percentile of s, why it is
// missing, or empty where no interval was computed.
func ci(s model.Summary, p int) texttab.Cell {
	if iv := s.CI(p); iv != nil {
		return texttab.Cell{Unit: texttab.Ms, V: iv.Lo, Hi: iv.Hi, Range: true}
	}
	if s.CI95 == nil && s.Pct(p) != nil {
		return texttab.Cell{Unit: texttab.Ms, Range: true, Missing: true, Blank: true}
	}
	c := pct(texttab.Ms, s, p)
	c.Missing, c.Range = true, true
	return c
}
