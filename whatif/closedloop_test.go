package whatif

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/model"
)

func containsText(lines []string, text string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, text) })
}

// laneRequests builds workers closed-loop lanes of n requests each: a
// worker's next request starts thinkMs after its last one ended; want[i]
// is request i's predecessor. Every fourth request fails once and is
// retried.
func laneRequests(workers, n int, thinkMs float64, rng *rand.Rand) (reqs []*recRequest, want map[string]string) {
	want = map[string]string{}
	for w := range workers {
		at := int64(w) * 1e6 // the workers start within a few ms
		prev := ""
		for k := range n {
			id := "w" + strconv.Itoa(w) + "-" + strconv.Itoa(k)
			outcomes := []string{""}
			if rng.IntN(4) == 0 {
				outcomes = []string{"server_error", ""}
			}
			r := request(id, id, at, outcomes...)
			d := 100 + rng.Float64()*500
			r.latencyMs += d
			r.endNs = at + int64(r.latencyMs*1e6)
			reqs = append(reqs, r)
			if prev != "" {
				want[id] = prev
			}
			prev, at = id, r.endNs+int64(thinkMs*1e6)
		}
	}
	sortByStart(reqs)
	return reqs, want
}

func sortByStart(reqs []*recRequest) {
	for i := 1; i < len(reqs); i++ {
		for j := i; j > 0 && reqs[j].startNs < reqs[j-1].startNs; j-- {
			reqs[j], reqs[j-1] = reqs[j-1], reqs[j]
		}
	}
}

// TestClosedLoopDetection: requests in 8 lanes of 40 are a closed loop of
// 8 workers with each request's predecessor its lane's previous one;
// Poisson arrivals at the same rate, and at a rate of 100 a second, are
// not.
func TestClosedLoopDetection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	reqs, want := laneRequests(8, 40, 0.3, rng)
	l := closedLoops(reqs)
	if got := l.workers[reqs[0].seg]; got != 8 {
		t.Fatalf("workers %d, want 8", got)
	}
	// Where two workers' requests end within the think time of each
	// other, timing alone cannot tell which worker went on first: a swap
	// there is allowed (it moves no start by more than that), in few
	// requests.
	swapped := 0
	for i, r := range reqs {
		got := ""
		if p := l.pred[i]; p >= 0 {
			got = reqs[p].id
			if reqs[l.succ[p]] != r {
				t.Errorf("%s: the successor of its predecessor %s is %s", r.id, got, reqs[l.succ[p]].id)
			}
		}
		if got == want[r.id] {
			continue
		}
		if got == "" || want[r.id] == "" || msAfter(r.startNs, reqs[l.pred[i]].endNs) > maxThinkMs {
			t.Errorf("%s: predecessor %q, want %q", r.id, got, want[r.id])
		}
		swapped++
	}
	if swapped > len(reqs)/20 {
		t.Errorf("%d of %d requests follow another worker's request", swapped, len(reqs))
	}
	for _, rate := range []float64{8 / 0.6, 100} {
		var open []*recRequest
		at := int64(0)
		for i := range 2000 {
			at += int64(rng.ExpFloat64() / rate * 1e9)
			r := request("p"+strconv.Itoa(i), "", at, "")
			r.latencyMs += rng.Float64() * 2000
			r.endNs = at + int64(r.latencyMs*1e6)
			open = append(open, r)
		}
		if l := closedLoops(open); len(l.workers) > 0 {
			t.Errorf("Poisson arrivals at %.0f/s: detected as a closed loop of %d workers", rate, l.workers[open[0].seg])
		}
	}
}

// TestClosedLoopReplay: with nothing changed, a closed loop's requests
// start where they were recorded; when the policy cuts the retries, a
// worker's later requests start earlier, each its think time after its
// predecessor's modeled end, and the assumptions say so.
func TestClosedLoopReplay(t *testing.T) {
	reqs, _ := laneRequests(8, 40, 0.3, rand.New(rand.NewPCG(3, 4)))
	pl := newPools(reqs)
	for i, s := range runPass(reqs, Policy{}, Options{Seed: 1}, pl, nil) {
		if d := s.startNs - reqs[i].startNs; d < -1000 || d > 1000 || s.moved {
			t.Fatalf("%s: moved %d ns with nothing changed", reqs[i].id, d)
		}
	}
	out := runPass(reqs, Policy{Inner: 1}, Options{Seed: 1}, pl, nil)
	earlier, moved := 0, 0
	for i, s := range out {
		if p := pl.loops.pred[i]; p >= 0 {
			want := out[p].startNs + int64(out[p].latencyMs*1e6) + int64(pl.loops.thinkMs[i]*1e6)
			if s.startNs != want {
				t.Errorf("%s: starts at %d, want %d", reqs[i].id, s.startNs, want)
			}
		}
		if s.startNs < reqs[i].startNs {
			earlier++
		}
		if s.moved {
			moved++
		}
	}
	if earlier < len(reqs)/2 || moved == 0 {
		t.Errorf("%d of %d requests start earlier, %d redrawn", earlier, len(reqs), moved)
	}
	res := replay(reqs, Policy{Inner: 1}, Options{Seed: 1})
	if !containsText(res.Assumptions, "closed loop of 8 workers") {
		t.Errorf("assumptions do not name the closed loop: %q", res.Assumptions)
	}
}

// TestGenIsOpenLoop: gen's workloads arrive as a Poisson process, and
// none of their segments is taken for a closed loop, so their replays
// keep the recorded starts.
func TestGenIsOpenLoop(t *testing.T) {
	for name, cfg := range map[string]sim.Config{"calm": calm(func(*sim.Policy) {}), "nested": nested(func(*sim.Policy) {}), "storm": storm(func(*sim.Policy) {})} {
		st, _ := workload.Rebuilt(t, cfg)
		reqs, err := load(context.Background(), st, "", model.Window{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l := closedLoops(reqs); len(l.workers) > 0 {
			t.Errorf("%s: closed loops %v", name, l.workers)
		}
	}
}
