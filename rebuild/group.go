package rebuild

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/retryscope/retryscope/model"
)

// builder groups attempts into logical requests, trace by trace, and sets
// root CLIENT spans aside (by their rows of the span facts) until every
// trace has been seen, since attempts split across traces can only be
// joined then.
type builder struct {
	opt  Options
	out  *writer
	dump dumpEnd
	pool []int64
}

// group is a logical request before it is measured.
type group struct {
	anchor   *span   // the logical span; nil: the first attempt stands for it
	attempts []*span // in start order
	tries    [][]int // per attempt, try number per layer, outermost first
	owners   []*span // per attempt, the SDK/GenAI span it ran under, or nil
	layers   []int   // tries per layer, as counts
	linkage  model.Linkage
	inferred bool
	attached string // orphans: the trace root
	// abandoned: attempts whose answer, though it looked fine, the caller
	// gave up on and sent the request again.
	abandoned map[*span]bool
}

// unit is one chain of sibling attempts under one parent.
type unit struct {
	attempts []*span
	owner    *span // the span standing for the unit, when there is one
}

// siblings are the attempts under one parent span, exported or not.
type siblings struct {
	parent  *span  // nil when the parent was not exported
	missing string // the parent's id when it was not exported
	list    []*span
}

// trace rebuilds the requests of one trace. Root CLIENT attempts are kept
// for splitAcrossTraces.
func (b *builder) trace(spans []*span) error {
	root := linkTree(spans)
	var units, orphans []*unit
	for _, g := range b.siblingGroups(spans) {
		chains := chainSiblings(g.list, 0)
		for _, c := range chains {
			u := &unit{attempts: c}
			switch {
			case g.missing != "":
				orphans = append(orphans, u)
				continue
			case g.parent != nil && len(chains) == 1 && !hasWrapperChild(g.parent):
				u.owner = g.parent
			}
			units = append(units, u)
		}
	}
	return b.appLoops(units, orphans, spans, root)
}

// linkTree sets parent and children links within a trace and returns its
// root (the first span without a parent), or nil.
func linkTree(spans []*span) *span {
	byID := make(map[string]*span, len(spans))
	for _, s := range spans {
		byID[s.spanID] = s
	}
	var root *span
	for _, s := range spans {
		if s.parentID == "" && root == nil {
			root = s
		}
		if p := byID[s.parentID]; s.parentID != "" && p != nil {
			s.parent = p
			p.children = append(p.children, s)
		}
	}
	return root
}

// siblingGroups gathers the trace's attempts by parent, in order of first
// appearance; root CLIENT attempts go to the split pool instead.
func (b *builder) siblingGroups(spans []*span) []*siblings {
	var order []*siblings
	groups := map[string]*siblings{}
	for _, s := range spans {
		if !isAttempt(s) {
			continue
		}
		key := s.parentID
		switch {
		case s.parentID == "" && s.kind == "client":
			b.pool = append(b.pool, s.factRow)
			continue
		case s.parentID == "":
			key = "root " + s.spanID // a lone INTERNAL attempt: its own group
		}
		g := groups[key]
		if g == nil {
			g = &siblings{parent: s.parent}
			if !s.parentExported && s.parentID != "" {
				g.missing = s.parentID
			}
			groups[key] = g
			order = append(order, g)
		}
		g.list = append(g.list, s)
	}
	return order
}

// appLoops finds application retry loops: an INTERNAL span whose only
// attempt-like children are SDK/GenAI CLIENT spans, each standing for its
// own chain of transport attempts, that are tries of one operation. Tries
// that follow a failed try, or that re-send a try whose spans look
// successful (loopRuns), become one two-layer request. Orphaned attempt
// chains (their SDK span was lost because the call threw) count as tries of
// the innermost INTERNAL span around them, marked inferred. Every other
// unit is a request of its own; orphans are attached to the root.
func (b *builder) appLoops(units, orphans []*unit, spans []*span, root *span) error {
	byOwner := map[*span]*unit{}
	for _, u := range units {
		if u.owner != nil {
			byOwner[u.owner] = u
		}
	}
	triesOf := map[*span][]*unit{}
	var loops []*span
	addTry := func(q *span, u *unit) {
		if triesOf[q] == nil {
			loops = append(loops, q)
		}
		triesOf[q] = append(triesOf[q], u)
	}
	for _, u := range units {
		if w := u.owner; w != nil && w.kind == "client" && w.parent != nil && w.parent.kind == "internal" {
			addTry(w.parent, u)
		}
	}
	for _, o := range orphans {
		if q := enclosingLoop(o, spans); q != nil {
			addTry(q, o)
		}
	}
	merged := map[*unit]bool{}
	var groups []*group
	for _, q := range loops {
		tries := triesOf[q]
		for _, run := range loopRuns(q, tries, byOwner) {
			for _, u := range run {
				merged[u] = true
			}
			groups = append(groups, loopGroup(q, run, len(run) == len(tries)))
		}
	}
	for _, u := range units {
		if !merged[u] {
			if err := b.emit(singleLayer(u)); err != nil {
				return err
			}
		}
	}
	for _, o := range orphans {
		if merged[o] {
			continue
		}
		g := singleLayer(o)
		g.linkage = model.LinkOrphan
		if root != nil {
			g.attached = root.key()
		}
		if err := b.emit(g); err != nil {
			return err
		}
	}
	for _, g := range groups {
		if err := b.emit(g); err != nil {
			return err
		}
	}
	return nil
}

// loopRuns splits the tries of loop span q, in start order, into runs of
// tries of one logical request, each try after the first linked to the one
// before it (tryLinks); runs of a single try are left out. It returns nil
// when q also makes other calls, so is not a plain retry loop.
func loopRuns(q *span, tries []*unit, byOwner map[*span]*unit) [][]*unit {
	for _, c := range q.children {
		if c.attemptLike() && (byOwner[c] == nil || isAttempt(c)) {
			return nil
		}
	}
	slices.SortStableFunc(tries, func(x, y *unit) int { return cmp.Compare(tryStart(x), tryStart(y)) })
	links := tryLinks(q, tries)
	var runs [][]*unit
	for i := 0; i < len(tries); {
		j := i + 1
		for j < len(tries) && links[j] {
			j++
		}
		// A lone try is still the loop's request: the loop span stands
		// for it, with its layers.
		if j-i >= 2 || len(tries) == 1 {
			runs = append(runs, tries[i:j])
		}
		i = j
	}
	return runs
}

// tryLinks says, for each try after the first, whether it retries the try
// before it. It does when that try failed (visibly, or its SDK span was
// lost because the call threw) and asked for the same thing; and when that
// try looked successful but the caller sent the same request again
// (resends) or the loop span recorded an exception or retry in between.
// A successful-looking try followed by orphaned ones is linked when the
// next try with an SDK span re-sends it, or, when none follows, when the
// loop is shown to retry elsewhere.
func tryLinks(q *span, tries []*unit) []bool {
	links := make([]bool, len(tries))
	var undecided []int
	for i := 1; i < len(tries); i++ {
		prev, cur := tries[i-1], tries[i]
		switch {
		case prev.owner == nil:
			links[i] = true
		case tryFailed(prev):
			links[i] = cur.owner == nil || sameCall(prev.owner, cur.owner)
		case cur.owner != nil:
			links[i] = resentAfter(q, prev, cur)
		default:
			undecided = append(undecided, i)
		}
	}
	retries := slices.Contains(links, true)
	for _, i := range undecided {
		prev := tries[i-1]
		next := i
		for next < len(tries) && tries[next].owner == nil {
			next++
		}
		if next < len(tries) {
			links[i] = resentAfter(q, prev, tries[next])
		} else {
			links[i] = retries || retryEventBetween(q, tryStart(prev), tryStart(tries[i]))
		}
	}
	return links
}

// sameCall: two SDK calls are tries of one operation that asked for the
// same thing, as far as their spans tell.
func sameCall(a, b *span) bool {
	return wrapperOp(a) == wrapperOp(b) && !otherRequest(a, b)
}

// resentAfter: try cur re-sends try prev, whose spans look successful.
// Start times may be whole milliseconds while ends are finer (the OTel JS
// SDK starts spans on Date.now()), so the next try may seem to start just
// before the last one ended, and after the event that announced it.
func resentAfter(q *span, prev, cur *unit) bool {
	if resends(prev.owner, cur.owner) {
		return true
	}
	return sameCall(prev.owner, cur.owner) && tryStart(cur)+clockSlack >= prev.owner.end &&
		retryEventBetween(q, tryStart(prev), tryStart(cur)+clockSlack)
}

// clockSlack is how far apart two instants may seem that are one: the
// rounding of a start time to the millisecond.
const clockSlack = int64(time.Millisecond)

// loopGroup makes the two-layer request of a run of tries of loop span q;
// whole says the run is every try of q, which then stands for the request.
// The last attempt of a try that looked successful, yet was followed by
// another try or left the loop failed, was abandoned by its caller.
func loopGroup(q *span, run []*unit, whole bool) *group {
	g := &group{linkage: model.LinkWrapped, abandoned: map[*span]bool{}}
	if whole {
		g.anchor = q
	}
	for _, u := range run {
		if u.owner == nil {
			g.linkage, g.inferred, g.attached = model.LinkOrphan, true, q.key()
		}
	}
	for i, u := range run {
		for j, a := range u.attempts {
			g.attempts = append(g.attempts, a)
			g.tries = append(g.tries, []int{i + 1, j + 1})
			g.owners = append(g.owners, u.owner)
		}
		if !tryFailed(u) && (i < len(run)-1 || (whole && q.failedItself())) {
			g.abandoned[u.attempts[len(u.attempts)-1]] = true
		}
	}
	g.layers = []int{len(run), len(g.attempts)}
	return g
}

func tryStart(u *unit) int64 {
	if u.owner != nil {
		return u.owner.start
	}
	return u.attempts[0].start
}

// tryFailed: the SDK call failed (or an evaluator rejected its answer); an
// orphaned chain failed when its last attempt did.
func tryFailed(u *unit) bool {
	if u.owner != nil {
		return u.owner.failedItself()
	}
	last := u.attempts[len(u.attempts)-1]
	return last.failedItself() || !last.hasResponse
}

// enclosingLoop is the innermost INTERNAL span of the trace whose time
// covers the orphaned chain and that makes no transport calls itself.
func enclosingLoop(o *unit, spans []*span) *span {
	start, end := o.attempts[0].start, o.attempts[0].end
	for _, a := range o.attempts {
		end = max(end, a.end)
	}
	var best *span
	for _, s := range spans {
		// A child may seem to end just after its parent (clockSlack).
		if s.kind != "internal" || s.attemptLike() || s.start > start+clockSlack || s.end+clockSlack < end {
			continue
		}
		direct := false
		for _, c := range s.children {
			direct = direct || isAttempt(c)
		}
		if !direct && (best == nil || s.end-s.start < best.end-best.start) {
			best = s
		}
	}
	return best
}

// singleLayer makes a one-layer request of a unit and names its linkage.
func singleLayer(u *unit) *group {
	g := &group{anchor: u.owner, attempts: u.attempts, layers: []int{len(u.attempts)}}
	for i := range u.attempts {
		g.tries = append(g.tries, []int{i + 1})
		var owner *span
		if u.owner != nil && u.owner.kind == "client" {
			owner = u.owner
		}
		g.owners = append(g.owners, owner)
	}
	g.linkage = linkageOf(u)
	return g
}

func linkageOf(u *unit) model.Linkage {
	if o := u.owner; o != nil && o.kind == "client" {
		if strings.HasPrefix(u.attempts[0].name, "Attempt.") {
			return model.LinkGRPC
		}
		return model.LinkWrapped
	}
	best := ""
	rank := map[string]int{"explicit": 4, "header": 3, "resend": 2, "grpc": 1}
	for _, a := range u.attempts {
		if rank[a.counterKind] > rank[best] {
			best = a.counterKind
		}
	}
	switch {
	case best != "":
		return model.Linkage(best)
	case u.owner != nil:
		return model.LinkParent
	}
	return model.LinkSingle
}

// splitAcrossTraces joins root CLIENT attempts, each in a trace of its own,
// into requests (split.go): by a shared logical id or retry counter when
// they carry one, else by the retry signature the dump shows.
func (b *builder) splitAcrossTraces(pool []*span) error {
	slices.SortStableFunc(pool, func(x, y *span) int {
		return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.traceID, y.traceID), cmp.Compare(x.spanID, y.spanID))
	})
	chains, inferred, alts := joinSplit(pool, int64(b.opt.SplitWindow))
	for i, chain := range chains {
		g := singleLayer(&unit{attempts: chain})
		if inferred[i] {
			g.linkage, g.inferred = model.LinkSplitInferred, true
		}
		if err := b.emit(g); err != nil {
			return err
		}
	}
	for _, a := range alts {
		if err := b.out.writeAlternative(a); err != nil {
			return err
		}
	}
	return nil
}

// isAttempt: attempt-like and at the lowest layer, so no attempt-like
// span of its own below it (SERVER spans of the callee do not count).
func isAttempt(s *span) bool {
	return s.attemptLike() && !hasWrapperChildOrAttempt(s)
}

func hasWrapperChildOrAttempt(s *span) bool {
	for _, c := range s.children {
		if c.attemptLike() {
			return true
		}
	}
	return false
}

// hasWrapperChild: some attempt-like child is not itself an attempt.
func hasWrapperChild(s *span) bool {
	for _, c := range s.children {
		if c.attemptLike() && !isAttempt(c) {
			return true
		}
	}
	return false
}

// chainSiblings splits attempts (in start order) into chains of tries of
// one logical request. Attempts of different operations never chain. A
// counter decides when present (0: a first attempt); otherwise an attempt
// continues the chain when it overlaps it (hedging), when the chain's last
// attempt failed or got no response, or when it re-sends that attempt. window > 0 also requires the
// gap after that failure to be at most window nanoseconds.
func chainSiblings(attempts []*span, window int64) [][]*span {
	byOp := map[string][]*span{}
	var ops []string
	for _, a := range attempts {
		k := a.opKey()
		if byOp[k] == nil {
			ops = append(ops, k)
		}
		byOp[k] = append(byOp[k], a)
	}
	var chains [][]*span
	for _, k := range ops {
		chains = append(chains, chainOne(byOp[k], window)...)
	}
	slices.SortStableFunc(chains, func(x, y []*span) int { return cmp.Compare(x[0].start, y[0].start) })
	return chains
}

func chainOne(list []*span, window int64) [][]*span {
	// Attempts that start in the same nanosecond (millisecond clocks,
	// instant retries, zero-duration attempts) come in the order their
	// counters give, not their ids': attempt 2 listed before attempt 1
	// would start a request of its own.
	list = slices.Clone(list)
	slices.SortStableFunc(list, func(x, y *span) int {
		return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(retryOrder(x), retryOrder(y)))
	})
	resendStyle := false
	for _, a := range list {
		resendStyle = resendStyle || a.counterKind == "resend"
	}
	var chains [][]*span
	var reach int64
	for _, a := range list {
		idx := a.retryIndex
		if idx == nil && resendStyle {
			zero := int64(0)
			idx = &zero
		}
		join := false
		if n := len(chains); n > 0 {
			prev := chains[n-1][len(chains[n-1])-1]
			gap := a.start - prev.end
			switch {
			case idx != nil:
				join = *idx > 0
			case a.start < reach:
				join = true
			case prev.failedItself() || !prev.hasResponse:
				join = window <= 0 || gap <= window
			case resends(prev, a):
				// GenAI spans as the attempts themselves: an answer that
				// looked fine, sent again.
				join = window <= 0 || gap <= window
			}
		}
		if join {
			chains[len(chains)-1] = append(chains[len(chains)-1], a)
			reach = max(reach, a.end)
		} else {
			chains = append(chains, []*span{a})
			reach = a.end
		}
	}
	return chains
}

// retryOrder is where an attempt's counter puts it among attempts that
// start together; one without a counter keeps its place (0).
func retryOrder(s *span) int64 {
	if s.retryIndex == nil {
		return 0
	}
	return *s.retryIndex
}

// wrapperOp says which SDK calls are tries of one operation: any LLM call
// (a fallback may change provider and model), else calls of one name.
func wrapperOp(s *span) string {
	if s.genAIOperation != "" || s.model != "" {
		return s.service + "\x00gen_ai"
	}
	return s.service + "\x00" + s.name
}
