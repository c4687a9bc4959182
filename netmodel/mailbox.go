package netmodel

import (
	"cmp"
	"math/bits"
	"slices"

	"simd/engine"
)

// This file holds the order in which SimAI's ns-3 makes the queue pairs of the sends its ranks
// issue at the workload's start (SetStartMailbox). SimAI runs ns-3's multithreaded scheduler:
// the nodes of a server (its GPUs and NVSwitch) form one logical process, and astra-sim's events
// run in the public one until a flow's completion first calls a rank back from a node's process
// (qp_finish runs at the sender's node and tells both ranks). A send issued from the public
// process schedules the start of its queue pair on the sending GPU through the server's mailbox
// (LogicalProcess::ScheduleWithContext), keyed by the sender's time, process and event counter.
// The counter moves only when the sender inserts an event of its own, which astra-sim's sends
// (each from its own memory-bus event) do not, so the sends of one instant carry one key, an
// all-to-all's fifteen per rank as a ring's eight channels. ReceiveMessages sorts the mailbox
// with std::sort(…, std::greater<>()) and takes it from the back: the sends come out in the
// reverse of the order libstdc++'s introsort leaves equal elements in (mailboxOrder). For the 64
// sends of eight GPUs with eight channels each that is every GPU's sends in reverse, but on GPUs
// 0 and 4 the first send first and then the others in reverse — what SimAI's ns-3 shows on the
// first step of every ring of the reference runs; for an all-to-all's 120 (eight GPUs sending to
// fifteen) every GPU's second to last send in order and then its first, but on GPUs 0 and 4 all
// in order — as ns-3 ends the all-to-all's NVLink flows (docs/models.md, "The start's
// mailbox"). A port serves its queue pairs in the order they were made (ccfluid's turns), so the
// order decides which flow of a port ends first. The sends keep the source ports they were
// issued with (SimAI numbers a pair's queue pairs as it issues them).
//
// Sends issued later, from a node's process, are scheduled there in order (a server's own
// sends) or through another server's mailbox one at a time; neither is reordered here.

// SetStartMailbox sets whether the sends ranks issue before any flow of theirs is done start in
// the order SimAI's multithreaded ns-3 makes their queue pairs (see the file's comment); off,
// in the order they are issued.
func (m *Simulator) SetStartMailbox(on bool) {
	m.mailbox, m.settled, m.unsettled = on, nil, 0
	if on {
		m.settled = make([]bool, m.fab.TotalGPUs())
		m.unsettled = len(m.settled)
	}
}

// mailFlow is a send waiting in its server's mailbox until the end of the instant it was
// issued in: the released flow, when it starts, and its place in the instant's releases.
type mailFlow struct {
	rel   releasedFlow
	start engine.Time
	order int32 // its place among the instant's sends, in the order they were released
}

// mailStart is a send of a mailbox scheduled to start, with the source port it was issued with
// (-1: none yet; a flow split over several QPs takes its ports as it starts).
type mailStart struct {
	rel   releasedFlow
	sport int32
}

const (
	// mailFlushTarget marks the event that orders an instant's mailbox sends, mailStartTarget
	// the start of one (Arg: its slot of Simulator.mailStarts).
	mailFlushTarget int32 = 2
	mailStartTarget int32 = 3
)

// inStartContext reports whether rank src's sends still go through its server's mailbox: the
// mailbox is on and no flow src sent or received is done yet (every rank's, once all are).
func (m *Simulator) inStartContext(src int32) bool {
	return m.unsettled > 0 && int(src) < len(m.settled) && !m.settled[src]
}

// settle records that a flow of rank ep (a GPU endpoint) is done: its later sends are issued
// from a node's process.
func (m *Simulator) settle(ep int32) {
	if int(ep) < len(m.settled) && !m.settled[ep] {
		m.settled[ep] = true
		m.unsettled--
	}
}

// post puts released flow rel, to start at start, into its server's mailbox for this instant.
func (m *Simulator) post(rel releasedFlow, start engine.Time) {
	if len(m.mail) == 0 {
		m.s.AtInstantEnd(m.hid, mailFlushTarget, 0)
	}
	m.mail = append(m.mail, mailFlow{rel: rel, start: start, order: int32(len(m.mail))})
}

// flushMail schedules the starts of this instant's mailbox sends, server by server, in the order
// the mailbox delivers them (mailboxOrder over the sends in astra-sim's order: rank by rank, each
// rank's in the order it released them), each with the source port of its place in the issue
// order.
func (m *Simulator) flushMail() {
	gps := int32(max(m.fab.Topo.GPUsPerServer, 1))
	slices.SortFunc(m.mail, func(a, b mailFlow) int {
		return cmp.Or(cmp.Compare(a.rel.src/gps, b.rel.src/gps), cmp.Compare(a.rel.src, b.rel.src), cmp.Compare(a.order, b.order))
	})
	for lo := 0; lo < len(m.mail); {
		hi := lo + 1
		for hi < len(m.mail) && m.mail[hi].rel.src/gps == m.mail[lo].rel.src/gps {
			hi++
		}
		group := m.mail[lo:hi]
		m.mailSports = m.mailSports[:0]
		for _, mf := range group {
			m.mailSports = append(m.mailSports, m.issueSport(mf.rel))
		}
		m.mailOrder = mailboxOrder(len(group), m.mailOrder)
		for _, i := range m.mailOrder {
			m.startMail(group[i], m.mailSports[i])
		}
		lo = hi
	}
	m.mail = m.mail[:0]
}

// startMail schedules mailbox send mf to start, with source port sport.
func (m *Simulator) startMail(mf mailFlow, sport int32) {
	k := m.mailSlot(mailStart{rel: mf.rel, sport: sport})
	m.s.At(mf.start, m.hid, mailStartTarget, int64(k))
}

// issueSport is the source port SimAI gives released flow rel as it issues it: its pair's next
// queue pair. -1 when it takes its ports as it starts (split over several QPs) or its endpoints
// are not in the fabric (the start reports that).
func (m *Simulator) issueSport(rel releasedFlow) int32 {
	src, err := m.fab.Node(rel.src)
	if err != nil {
		return -1
	}
	dst, err := m.fab.Node(rel.dst)
	if err != nil {
		return -1
	}
	if m.splits(&rel) {
		return -1
	}
	return int32(m.pairs.get(src, dst).nextSport())
}

// mailSlot keeps s until its start and returns its slot.
func (m *Simulator) mailSlot(s mailStart) int32 {
	if n := len(m.mailFree); n > 0 {
		k := m.mailFree[n-1]
		m.mailFree = m.mailFree[:n-1]
		m.mailStarts[k] = s
		return k
	}
	m.mailStarts = append(m.mailStarts, s)
	return int32(len(m.mailStarts) - 1)
}

// mailboxOrder is the order in which a mailbox of n messages with equal keys delivers them,
// as indices into the order they were posted: libstdc++'s std::sort leaves equal elements where
// its partitions move them (below), and the reader takes the sorted mailbox from the back.
// buf is reused.
func mailboxOrder(n int, buf []int) []int {
	buf = buf[:0]
	for i := range n {
		buf = append(buf, i)
	}
	if n > 1 {
		introsortEqual(buf, 0, n, 2*(bits.Len(uint(n))-1))
	}
	slices.Reverse(buf)
	return buf
}

// introsortEqual is libstdc++'s __introsort_loop on elements that all compare equal: while a
// range holds more than 16, the median of its second, middle and last element is swapped to
// its front — with every comparison false, the middle one — and __unguarded_partition swaps
// the rest pairwise from both ends until they meet, where the range is cut; the right part is
// sorted the same way and the left one goes round again. The insertion sort that ends
// std::sort moves no element that is not less than the one before it, so it leaves them as
// they are. Each cut halves a range, so the depth limit (2⌊log₂ n⌋) is never reached and the
// heap sort it would fall back to never runs.
func introsortEqual(a []int, first, last, depth int) {
	for last-first > 16 && depth > 0 {
		depth--
		mid := first + (last-first)/2
		a[first], a[mid] = a[mid], a[first]
		lo, hi := first+1, last
		for {
			hi--
			if lo >= hi {
				break
			}
			a[lo], a[hi] = a[hi], a[lo]
			lo++
		}
		introsortEqual(a, lo, last, depth)
		last = lo
	}
}
