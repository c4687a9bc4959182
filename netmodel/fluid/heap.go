package fluid

// hent is an entry of the solver's heap: a region link (its index in rl) with its key, the
// fair share stored when it was last refreshed, and its link id to break ties the same way on
// every run. Keeping the key in the entry keeps the heap's comparisons inside the heap array.
type hent struct {
	share float64
	link  int32
	i     int32
}

func (a hent) less(b hent) bool {
	if a.share != b.share {
		return a.share < b.share
	}
	return a.link < b.link
}

// down sifts the entry at position i of the solver's binary min-heap to its place. Keys are
// refreshed lazily at the top (see solve), so only the root ever moves down, and nothing
// moves up.
func (n *Network) down(i int) {
	h := n.heap
	x := h[i]
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].less(h[c]) {
			c++
		}
		if !h[c].less(x) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
}

// pop removes the root.
func (n *Network) pop() {
	last := len(n.heap) - 1
	n.heap[0] = n.heap[last]
	n.heap = n.heap[:last]
	if last > 0 {
		n.down(0)
	}
}
