package ccl

import (
	"fmt"
	"math/bits"
	"slices"
)

// Check proves by execution that a DAG implements its collective (see Collective for what each
// operation promises). It walks the flows in dependency order, tracking for every rank (and
// NVSwitch) and every data piece which ranks' contributions it holds, and fails unless
//
//   - the dependencies form a DAG whose endpoints are group members or their servers' NVSwitches;
//   - every flow's bytes are exactly the bytes of the pieces it carries (nothing invented);
//   - a flow only sends what its sender holds once the flows that are its ancestors have
//     arrived there — data that arrives by a path the flow does not wait for does not count, so
//     a missing or wrong parent is caught even when a fast network would hide it;
//   - no delivery double-counts a contribution, and none delivers what the receiver already has
//     (a duplicated chunk; CheckWith can allow this for finished pieces);
//   - at the end every rank holds exactly what the collective promises (nothing lost), and the
//     result is the same whichever order concurrent flows arrive in.
//
// Contributions are tracked as sets of group indices, so the cost is about the number of flows
// times their ancestors times the group size / 64.
func Check(d DAG) error { return CheckWith(d, CheckOptions{}) }

// CheckOptions relax Check for DAGs that are correct but wasteful on purpose.
type CheckOptions struct {
	// AllowRedundant accepts a delivery of a finished piece (reduced over the whole group, or
	// an all-gather or all-to-all piece) to an endpoint that already holds it finished: the
	// receiver leaves it as it is. SimCCL's PXN rings do this (its relays forward every step,
	// also chunks the relaying GPU and the next server's entry already hold). A delivery of a
	// partial sum the receiver already holds, or that counts a contribution twice, is still
	// refused, and so is everything else Check refuses.
	AllowRedundant bool
}

// CheckWith is Check with options.
func CheckWith(d DAG, opt CheckOptions) error {
	c := d.Collective()
	if c.Empty() && d.NumFlows() == 0 {
		return nil // truncated to empty pieces: nothing to move
	}
	k, err := newChecker(d)
	if err != nil {
		return fmt.Errorf("%s on %d ranks: %w", c.Op, len(c.Ranks), err)
	}
	k.redundant = opt.AllowRedundant
	if err := k.run(); err != nil {
		return fmt.Errorf("%s on %d ranks: %w", c.Op, len(c.Ranks), err)
	}
	return nil
}

type checker struct {
	d     DAG
	c     *Collective
	n     int // group size
	w     int // words per contributor set
	slot  map[int32]int
	nSlot int

	order   []FlowID // a topological order (FIFO)
	pos     []int32  // position of each flow in order
	carried [][]uint64

	visit []uint32
	epoch uint32

	redundant bool // CheckOptions.AllowRedundant
}

func newChecker(d DAG) (*checker, error) {
	c := d.Collective()
	n := len(c.Ranks)
	if n < 1 {
		return nil, fmt.Errorf("the group is empty")
	}
	if c.Pieces < 1 {
		return nil, fmt.Errorf("%d pieces", c.Pieces)
	}
	switch c.Op {
	case OpAllReduce:
	case OpReduceScatter, OpAllGather:
		if c.Pieces%n != 0 {
			return nil, fmt.Errorf("%d pieces is not a multiple of the group size", c.Pieces)
		}
	case OpAllToAll:
		if c.Pieces%(n*n) != 0 {
			return nil, fmt.Errorf("%d pieces is not a multiple of the group size squared", c.Pieces)
		}
	default:
		return nil, fmt.Errorf("nothing to check for %s", c.Op)
	}
	if c.GPUsPerServer < 1 {
		return nil, fmt.Errorf("%d GPUs per server", c.GPUsPerServer)
	}
	k := &checker{d: d, c: c, n: n, w: (n + 63) / 64, slot: map[int32]int{}}
	for i, r := range c.Ranks {
		if r < 0 || int(r) >= c.TotalGPUs {
			return nil, fmt.Errorf("rank %d is not one of the %d GPUs", r, c.TotalGPUs)
		}
		if _, dup := k.slot[r]; dup {
			return nil, fmt.Errorf("rank %d is listed twice", r)
		}
		k.slot[r] = i
	}
	k.nSlot = n
	for _, r := range c.Ranks {
		nv := c.NVSwitch(int(r) / c.GPUsPerServer)
		if _, ok := k.slot[nv]; !ok {
			k.slot[nv] = k.nSlot
			k.nSlot++
		}
	}
	return k, nil
}

// endpoint names an endpoint in messages.
func (k *checker) endpoint(id int32) string {
	if int(id) >= k.c.TotalGPUs {
		return fmt.Sprintf("NVSwitch %d (server %d)", id, int(id)-k.c.TotalGPUs)
	}
	return fmt.Sprintf("rank %d", id)
}

// initial is what endpoint slot s holds of piece p before any flow.
func (k *checker) initial(s, p int, out []uint64) {
	clear(out)
	if s >= k.n {
		return // an NVSwitch starts empty
	}
	switch k.c.Op {
	case OpAllReduce, OpReduceScatter:
		setBit(out, s)
	case OpAllGather, OpAllToAll:
		if k.owner(p) == s {
			setBit(out, s)
		}
	}
}

// owner is the group index that starts with piece p (all-gather, all-to-all): pieces are laid
// out owner by owner in both.
func (k *checker) owner(p int) int { return p / (k.c.Pieces / k.n) }

// wanted is what endpoint slot s must hold of piece p at the end; ok is false if anything goes.
func (k *checker) wanted(s, p int, out []uint64) bool {
	if s >= k.n {
		return false
	}
	clear(out)
	per := k.c.Pieces / k.n
	switch k.c.Op {
	case OpAllReduce:
		setAll(out, k.n)
	case OpReduceScatter:
		if p/per != s {
			return false
		}
		setAll(out, k.n)
	case OpAllGather:
		setBit(out, p/per)
	case OpAllToAll:
		perPair := k.c.Pieces / (k.n * k.n)
		if (p/perPair)%k.n != s {
			return false
		}
		setBit(out, p/per)
	}
	return true
}

func setBit(b []uint64, i int) { b[i/64] |= 1 << (i % 64) }

func setAll(b []uint64, n int) {
	for i := range n {
		setBit(b, i)
	}
}

func isEmpty(b []uint64) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func subset(a, b []uint64) bool { // a ⊆ b
	for i := range a {
		if a[i]&^b[i] != 0 {
			return false
		}
	}
	return true
}

func disjoint(a, b []uint64) bool {
	for i := range a {
		if a[i]&b[i] != 0 {
			return false
		}
	}
	return true
}

func count(b []uint64) int {
	c := 0
	for _, x := range b {
		c += bits.OnesCount64(x)
	}
	return c
}

// finished says a piece's value holds every contribution it gets: the whole group's for a
// reduction, its one owner's (any value at all) for all-gather and all-to-all.
func (k *checker) finished(v []uint64) bool {
	if k.c.Op == OpAllReduce || k.c.Op == OpReduceScatter {
		return count(v) == k.n
	}
	return !isEmpty(v)
}

// merge applies a delivery of car to cur: contributions add up when disjoint; a more complete
// value replaces a less complete one; a finished value the receiver already holds is left as
// it is if redundant deliveries are allowed; anything else double-counts or is redundant.
func (k *checker) merge(cur, car []uint64) (string, bool) {
	switch {
	case subset(car, cur):
		if k.redundant && k.finished(car) {
			return "", true
		}
		return "already holds it", false
	case disjoint(cur, car):
		for i := range cur {
			cur[i] |= car[i]
		}
	case subset(cur, car):
		copy(cur, car)
	default:
		return "would count some contributions twice", false
	}
	return "", true
}

func (k *checker) run() error {
	d, c := k.d, k.c
	nf := d.NumFlows()
	// Topological order, parents validated on the way.
	indeg := make([]int32, nf)
	var buf []FlowID
	for i := range nf {
		buf = d.Parents(FlowID(i), buf[:0])
		for _, p := range buf {
			if p < 0 || int(p) >= nf {
				return fmt.Errorf("flow %d has parent %d, which does not exist", i, p)
			}
			if p == FlowID(i) {
				return fmt.Errorf("flow %d is its own parent", i)
			}
		}
		indeg[i] = int32(len(buf))
	}
	order, err := k.topoOrder(slices.Clone(indeg), false)
	if err != nil {
		return err
	}
	k.order = order
	k.pos = make([]int32, nf)
	for i, f := range order {
		k.pos[f] = int32(i)
	}
	k.visit = make([]uint32, nf)
	k.carried = make([][]uint64, nf)

	state := make([]uint64, k.w)
	var anc []FlowID
	for _, id := range order {
		f := d.Flow(id)
		if err := k.checkFlow(id, f); err != nil {
			return err
		}
		src := k.slot[f.Src]
		anc = k.ancestorsInto(id, f.Src, anc[:0])
		np := int(f.PieceHi - f.PieceLo)
		car := make([]uint64, np*k.w)
		for j := range np {
			p := int(f.PieceLo) + j
			k.initial(src, p, state)
			for _, a := range anc {
				af := d.Flow(a)
				if int32(p) < af.PieceLo || int32(p) >= af.PieceHi {
					continue
				}
				off := (p - int(af.PieceLo)) * k.w
				if why, ok := k.merge(state, k.carried[a][off:off+k.w]); !ok {
					return fmt.Errorf("flow %d (%s → %s) brings piece %d to %s, which %s",
						a, k.endpoint(af.Src), k.endpoint(af.Dst), p, k.endpoint(af.Dst), why)
				}
			}
			if isEmpty(state) {
				return fmt.Errorf("flow %d (%s → %s, %s channel %d chunk %d) sends piece %d, which its sender does not hold once the flow's ancestors have arrived: a parent is missing or wrong",
					id, k.endpoint(f.Src), k.endpoint(f.Dst), f.Kind, f.Channel, f.Chunk, p)
			}
			copy(car[j*k.w:], state)
		}
		k.carried[id] = car
	}

	// The end state, once in the order found and once in another valid order.
	final1, err := k.finalState(order)
	if err != nil {
		return err
	}
	order2, _ := k.topoOrder(indeg, true)
	final2, err := k.finalState(order2)
	if err != nil {
		return err
	}
	if !slices.Equal(final1, final2) {
		return fmt.Errorf("the result depends on the order in which concurrent flows arrive: a dependency is missing")
	}
	want := make([]uint64, k.w)
	for s := 0; s < k.n; s++ {
		for p := 0; p < c.Pieces; p++ {
			if !k.wanted(s, p, want) {
				continue
			}
			got := final1[(s*c.Pieces+p)*k.w : (s*c.Pieces+p+1)*k.w]
			if !slices.Equal(got, want) {
				return fmt.Errorf("rank %d ends with piece %d holding %d of the %d contributions it should: data is lost or a flow is missing",
					c.Ranks[s], p, count(got), count(want))
			}
		}
	}
	return nil
}

// checkFlow checks a flow on its own: endpoints, pieces, bytes.
func (k *checker) checkFlow(id FlowID, f Flow) error {
	if _, ok := k.slot[f.Src]; !ok {
		return fmt.Errorf("flow %d is sent by %d, which is neither a group member nor the NVSwitch of a member's server", id, f.Src)
	}
	if _, ok := k.slot[f.Dst]; !ok {
		return fmt.Errorf("flow %d goes to %d, which is neither a group member nor the NVSwitch of a member's server", id, f.Dst)
	}
	if f.Src == f.Dst {
		return fmt.Errorf("flow %d goes from %s to itself", id, k.endpoint(f.Src))
	}
	if f.PieceLo < 0 || f.PieceHi > int32(k.c.Pieces) || f.PieceLo >= f.PieceHi {
		return fmt.Errorf("flow %d carries pieces [%d, %d) of %d", id, f.PieceLo, f.PieceHi, k.c.Pieces)
	}
	if want := k.c.RangeBytes(f.PieceLo, f.PieceHi); f.Bytes != want {
		return fmt.Errorf("flow %d (%s → %s) is %d bytes but its pieces [%d, %d) hold %d", id, k.endpoint(f.Src), k.endpoint(f.Dst), f.Bytes, f.PieceLo, f.PieceHi, want)
	}
	return nil
}

// ancestorsInto lists, in topological order, the ancestors of id that deliver to endpoint dst.
func (k *checker) ancestorsInto(id FlowID, dst int32, out []FlowID) []FlowID {
	k.epoch++
	if k.epoch == 0 {
		clear(k.visit)
		k.epoch = 1
	}
	stack := k.d.Parents(id, nil)
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if k.visit[a] == k.epoch {
			continue
		}
		k.visit[a] = k.epoch
		if k.d.Flow(a).Dst == dst {
			out = append(out, a)
		}
		stack = k.d.Parents(a, stack)
	}
	slices.SortFunc(out, func(a, b FlowID) int { return int(k.pos[a]) - int(k.pos[b]) })
	return out
}

// topoOrder is Kahn's algorithm, taking ready flows first in, first out or (lifo) last in,
// first out. It fails on a cycle.
func (k *checker) topoOrder(indeg []int32, lifo bool) ([]FlowID, error) {
	nf := len(indeg)
	order := make([]FlowID, 0, nf)
	var ready []FlowID
	for i := range nf {
		if indeg[i] == 0 {
			ready = append(ready, FlowID(i))
		}
	}
	var buf []FlowID
	head := 0
	for head < len(ready) {
		var f FlowID
		if lifo {
			f = ready[len(ready)-1]
			ready = ready[:len(ready)-1]
		} else {
			f = ready[head]
			head++
		}
		order = append(order, f)
		buf = k.d.Children(f, buf[:0])
		for _, ch := range buf {
			indeg[ch]--
			if indeg[ch] == 0 {
				ready = append(ready, ch)
			}
		}
		if lifo {
			head = 0
		}
	}
	if len(order) != nf {
		return nil, fmt.Errorf("the dependencies have a cycle (%d of %d flows can never start)", nf-len(order), nf)
	}
	return order, nil
}

// finalState applies every delivery in the given order to every endpoint.
func (k *checker) finalState(order []FlowID) ([]uint64, error) {
	P := k.c.Pieces
	st := make([]uint64, k.nSlot*P*k.w)
	tmp := make([]uint64, k.w)
	for s := 0; s < k.nSlot; s++ {
		for p := 0; p < P; p++ {
			k.initial(s, p, tmp)
			copy(st[(s*P+p)*k.w:], tmp)
		}
	}
	for _, id := range order {
		f := k.d.Flow(id)
		dst := k.slot[f.Dst]
		for p := f.PieceLo; p < f.PieceHi; p++ {
			off := int(p-f.PieceLo) * k.w
			cur := st[(dst*P+int(p))*k.w : (dst*P+int(p)+1)*k.w]
			if why, ok := k.merge(cur, k.carried[id][off:off+k.w]); !ok {
				return nil, fmt.Errorf("flow %d (%s → %s, %s channel %d chunk %d) brings piece %d to a receiver that %s",
					id, k.endpoint(f.Src), k.endpoint(f.Dst), f.Kind, f.Channel, f.Chunk, p, why)
			}
		}
	}
	return st, nil
}
