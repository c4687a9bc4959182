package cc

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"simd/engine"
)

// PFC constants of SimAI's ns-3, with their sources.
const (
	// PFCReserveBytes is the private buffer of each ingress port (SwitchMmu::SwitchMmu: reserve =
	// 4 * 1024 bytes). ConfigNPort counts it once per port in total_rsrv.
	PFCReserveBytes = 4 * 1024
	// PFCResumeOffsetBytes is the hysteresis between pause and resume (SwitchMmu::SwitchMmu:
	// resume_offset = 3 * 1024 bytes).
	PFCResumeOffsetBytes = 3 * 1024
	// PFCInitialShift is the pfc_a_shift of a port no faster than the NIC: the threshold is 1/8 of the
	// free shared buffer (SetupNetwork: "uint32_t shift = 3; // by default 1/8").
	PFCInitialShift = 3
	// pfcHeadroomOneWayBDPs is the headroom of a port in one-way bandwidth-delay products
	// (SetupNetwork: headroom = rate * delay / 8 / 1000000000 * 3, delay in ns).
	pfcHeadroomOneWayBDPs = 3
)

// SwitchBufferConfig describes one switch's shared buffer (SimAI.conf BUFFER_SIZE, and SimAI's
// SetupNetwork derived values).
type SwitchBufferConfig struct {
	// BufferBytes is BUFFER_SIZE in MB × 1024 × 1024 (SetupNetwork: ConfigBufferSize).
	BufferBytes float64
	// PortRate is the bit/s of each port; the index is the port number as the caller numbers them.
	PortRate []float64
	// PortDelay is the propagation delay of each port's link.
	PortDelay []engine.Time
	// NICRate is SimAI's nic_rate, the bit/s of device 1 of the first host (get_nic_rate), which
	// sets the per-port shift. With generated topologies that device is the GPU's NVLink.
	NICRate float64
	// ReserveBytes is each port's private buffer; PFCReserveBytes in SimAI.
	ReserveBytes float64
	// ResumeOffset is the pause/resume hysteresis in bytes; PFCResumeOffsetBytes in SimAI.
	ResumeOffset float64
}

// DefaultSwitchBuffer is SimAI's configuration of a switch with the given buffer (bytes), port rates
// (bit/s), port link delays and nic_rate. The slices are not copied; NewSwitchBuffer reads them once.
func DefaultSwitchBuffer(bufferBytes float64, rates []float64, delays []engine.Time, nicRate float64) SwitchBufferConfig {
	return SwitchBufferConfig{
		BufferBytes:  bufferBytes,
		PortRate:     rates,
		PortDelay:    delays,
		NICRate:      nicRate,
		ReserveBytes: PFCReserveBytes,
		ResumeOffset: PFCResumeOffsetBytes,
	}
}

// Validate reports the first problem with c, naming the field.
func (c *SwitchBufferConfig) Validate() error {
	if !(c.BufferBytes > 0) || math.IsInf(c.BufferBytes, 0) {
		return fmt.Errorf("switch buffer: BufferBytes %v: want a positive size", c.BufferBytes)
	}
	if len(c.PortRate) == 0 {
		return errors.New("switch buffer: no ports")
	}
	if len(c.PortDelay) != len(c.PortRate) {
		return fmt.Errorf("switch buffer: %d port rates but %d port delays", len(c.PortRate), len(c.PortDelay))
	}
	for i, r := range c.PortRate {
		if !(r > 0) || r >= math.MaxUint64 {
			return fmt.Errorf("switch buffer: PortRate[%d] %v: want a positive rate in bit/s", i, r)
		}
		if c.PortDelay[i] < 0 {
			return fmt.Errorf("switch buffer: PortDelay[%d] %v: want a non-negative delay", i, c.PortDelay[i])
		}
	}
	if !(c.NICRate > 0) || c.NICRate >= math.MaxUint64 {
		return fmt.Errorf("switch buffer: NICRate %v: want a positive rate in bit/s", c.NICRate)
	}
	if !(c.ReserveBytes >= 0) || math.IsInf(c.ReserveBytes, 0) {
		return fmt.Errorf("switch buffer: ReserveBytes %v: want a non-negative size", c.ReserveBytes)
	}
	if !(c.ResumeOffset >= 0) || math.IsInf(c.ResumeOffset, 0) {
		return fmt.Errorf("switch buffer: ResumeOffset %v: want a non-negative size", c.ResumeOffset)
	}
	if pool, headroom, reserve := c.pool(); pool <= 0 {
		return fmt.Errorf("switch buffer: BufferBytes %.0f is not larger than the ports' headroom %.0f "+
			"plus reserve %.0f (%w); raise BUFFER_SIZE", c.BufferBytes, headroom, reserve, ErrNoSharedPool)
	}
	return nil
}

// ErrNoSharedPool is the error Validate wraps when the buffer is not larger than its ports'
// headroom and reserve. SimAI's ns-3 runs such a switch without PFC: its threshold, (buffer −
// Σheadroom − Σreserve − shared) >> shift in uint32 (SwitchMmu::GetPfcThreshold), wraps around
// to hundreds of MB, so no port ever reaches it (with a pool of exactly 0 the first byte above
// a reserve would pause its port; the two cannot be told apart here, and neither happens with
// real buffers).
var ErrNoSharedPool = errors.New("no shared pool: SimAI's ns-3 never pauses such a switch")

// pool is BufferBytes − Σheadroom − Σreserve, with the two sums.
func (c *SwitchBufferConfig) pool() (pool, headroom, reserve float64) {
	for i := range c.PortRate {
		headroom += pfcHeadroom(c.PortRate[i], c.PortDelay[i])
	}
	reserve = float64(c.ReserveBytes * float64(len(c.PortRate)))
	return c.BufferBytes - headroom - reserve, headroom, reserve
}

// pfcHeadroom is SetupNetwork's per-port headroom in bytes: rate * delay / 8 / 1000000000 * 3 in
// uint64 arithmetic with the delay in whole nanoseconds (ns-3's time step), so the one-way BDP is
// floored to whole bytes before it is tripled.
func pfcHeadroom(rate float64, delay engine.Time) float64 {
	r := uint64(math.Round(rate))
	ns := uint64(delay.Nanoseconds())
	hi, lo := bits.Mul64(r, ns)
	const divisor = 8 * 1000000000
	if hi >= divisor {
		// Beyond any real link (the product overflows even the 128-bit quotient); ns-3 would have
		// overflowed long before. Fall back to floating point.
		return pfcHeadroomOneWayBDPs * math.Floor(rate*float64(ns)/divisor)
	}
	bdp, _ := bits.Div64(hi, lo, divisor)
	return pfcHeadroomOneWayBDPs * float64(bdp)
}

// pfcShift is SetupNetwork's pfc_a_shift: start at 3 and, while the port is faster than nic_rate,
// take one off and halve the (integer) rate, down to 0. A port at nic_rate keeps 1/8 of the free
// shared buffer; one twice as fast gets 1/4, and so on.
func pfcShift(rate, nicRate float64) uint {
	r := uint64(math.Round(rate))
	nic := uint64(math.Round(nicRate))
	shift := uint(PFCInitialShift)
	for r > nic && shift > 0 {
		shift--
		r /= 2
	}
	return shift
}

// pfcPort is the state of one ingress port.
type pfcPort struct {
	headroom float64 // configured headroom bytes (counted in Σheadroom)
	divisor  float64 // 2^shift
	shift    uint
	ingress  float64 // bytes that entered through this port and have not left (reserve + shared + headroom)
	paused   bool
	// sharedCap is the port's shared use when it was paused; while paused, occupancy above
	// reserve + sharedCap is headroom (ns-3's hdrm_bytes).
	sharedCap float64
}

// SwitchBuffer re-implements the shared-buffer MMU of SimAI's ns-3 (switch-mmu.cc,
// configured by SetupNetwork in the ns-3 frontend's common.h) for one switch and the one lossless
// priority simd models (the data queue, pg 3).
//
// ns-3's model, per ingress port:
//
//   - the first ReserveBytes of the port's ingress occupancy are private (SwitchMmu::reserve);
//   - the bytes above the reserve are "shared" and count in the switch-wide shared_used_bytes;
//   - a packet whose arrival would push the port's shared use above the dynamic threshold is put
//     in the port's headroom instead (UpdateIngressAdmission), and any headroom use pauses the port;
//   - the dynamic threshold is (buffer − Σheadroom − Σreserve − shared_used_bytes) >> pfc_a_shift
//     (GetPfcThreshold), so every byte anyone puts in the shared pool lowers every port's threshold;
//   - CheckShouldPause: not paused and (headroom use > 0 or shared use ≥ threshold);
//   - CheckShouldResume: paused, no headroom use, and (shared use = 0 or shared use + resume_offset ≤
//     threshold).
//
// The fluid model moves occupancies continuously, so there is no "packet that overflows": the caller
// pauses a port at the instant its occupancy reaches PauseLevel. What ns-3 puts in hdrm_bytes is,
// here, what arrives while the port is paused: SetPaused(port, true) freezes the port's shared use at
// its value at that instant, and occupancy above it is headroom (HeadroomUsed). Draining takes
// headroom first, as RemoveFromIngressAdmission does, so the shared use only starts falling once the
// headroom is empty, which is also when ns-3 allows a resume. The one difference: ns-3 would move
// arrivals back into the shared pool if the threshold rose while paused (other ports drained); here
// the split is fixed at pause time. Those arrivals are at most one headroom's worth.
//
// NVSwitches get the same buffer configuration in SetupNetwork (and apply the same admission) but
// NVSwitchNode never calls CheckAndSendPfc, so they never pause their upstream. The caller decides
// whether to build a SwitchBuffer for an NVSwitch at all; nothing here knows node types.
//
// ns-3 checks pause after every packet that enters through the port (SwitchNode::SendToDev) and
// resume only when a packet that entered through the port leaves (SwitchNotifyDequeue). The fluid
// caller checks ShouldPause while the port's occupancy rises and ShouldResume while it falls.
//
// Arithmetic: ns-3 uses uint32 byte counts and an integer shift; here occupancies are real numbers
// and the shift is a division by 2^shift, so thresholds are not floored to whole bytes. ns-3's uint32
// subtraction would wrap to a huge threshold (PFC never fires) when the shared pool is overdrawn; here
// the threshold is floored at 0, and Validate rejects a buffer smaller than its headroom plus reserve.
//
// It holds per-port ingress occupancy, the dynamic PFC threshold and the paused flags, and keeps no
// clock: the caller updates occupancies with SetIngress and applies the pauses and resumes it
// decides on with SetPaused. Every query that needs the switch-wide shared use sums the ports that
// hold shared bytes (O(held) once per change, O(log held) per query); nothing allocates after the
// first sums.
type SwitchBuffer struct {
	pool         float64 // BufferBytes − Σheadroom − Σreserve: what the dynamic threshold divides
	reserve      float64
	resumeOffset float64
	ports        []pfcPort
	// held lists the ports whose occupancy exceeds the reserve, the only ones with a shared use:
	// heldAt[p] is p's place in it, or −1. A switch under load holds bytes from a few of its
	// ports, so the sums below run over these, not over every port.
	held   []int32
	heldAt []int32
	// Prefix and suffix sums of the held ports' shared use in port order (pre[k] = the first k,
	// suf[k] = from the k-th on, held sorted), cached until an occupancy or a pause changes, so
	// that asking every port of a switch costs O(held), not O(ports²). A port's "others" is the
	// sum of the held ports below it plus that of those above it, which does not depend on the
	// port's own occupancy. A port without shared use adds exactly 0, so these are bit for bit
	// the sums over every port.
	pre, suf    []float64
	sharedValid bool
	paused      int // ports paused now
}

// NewSwitchBuffer builds the buffer of cfg with every port empty and unpaused. It panics if
// cfg.Validate() fails; validate user input first.
func NewSwitchBuffer(cfg *SwitchBufferConfig) *SwitchBuffer {
	if err := cfg.Validate(); err != nil {
		panic("cc.NewSwitchBuffer: " + err.Error())
	}
	b := &SwitchBuffer{
		reserve:      cfg.ReserveBytes,
		resumeOffset: cfg.ResumeOffset,
		ports:        make([]pfcPort, len(cfg.PortRate)),
		heldAt:       make([]int32, len(cfg.PortRate)),
		pre:          make([]float64, 1, len(cfg.PortRate)+1),
		suf:          make([]float64, 1, len(cfg.PortRate)+1),
	}
	for i := range b.heldAt {
		b.heldAt[i] = -1
	}
	// ConfigNPort sums headroom and reserve over every device of the switch.
	var totalHeadroom float64
	for i := range b.ports {
		p := &b.ports[i]
		p.headroom = pfcHeadroom(cfg.PortRate[i], cfg.PortDelay[i])
		p.shift = pfcShift(cfg.PortRate[i], cfg.NICRate)
		p.divisor = float64(uint64(1) << p.shift)
		totalHeadroom += p.headroom
	}
	b.pool = cfg.BufferBytes - totalHeadroom - float64(cfg.ReserveBytes*float64(len(b.ports)))
	return b
}

// Ports is the number of ports.
func (b *SwitchBuffer) Ports() int { return len(b.ports) }

// Headroom is the configured headroom of port in bytes: 3 one-way bandwidth-delay products,
// 3·⌊rate·delay_ns/8e9⌋ (SetupNetwork).
func (b *SwitchBuffer) Headroom(port int) float64 { return b.ports[port].headroom }

// Shift is the port's pfc_a_shift: its threshold is the free shared buffer divided by 2^Shift.
func (b *SwitchBuffer) Shift(port int) uint { return b.ports[port].shift }

// Threshold is the dynamic PFC threshold of a port for the given shared-buffer use:
// (buffer − Σheadroom − Σreserve − sharedUsed) >> shift, as a real number (divide by 2^shift),
// floored at 0 (SwitchMmu::GetPfcThreshold).
func (b *SwitchBuffer) Threshold(port int, sharedUsed float64) float64 {
	return b.threshold(&b.ports[port], sharedUsed)
}

func (b *SwitchBuffer) threshold(p *pfcPort, sharedUsed float64) float64 {
	free := b.pool - sharedUsed
	if free <= 0 {
		return 0
	}
	return free / p.divisor
}

// SetIngress sets the bytes that entered through port and have not left yet (reserve, shared and
// headroom together). The caller keeps occupancies up to date; negative values (fluid round-off)
// count as 0.
func (b *SwitchBuffer) SetIngress(port int, bytes float64) {
	if bytes < 0 {
		bytes = 0
	}
	b.ports[port].ingress = bytes
	b.sharedValid = false
	switch in := b.heldAt[port] >= 0; {
	case bytes > b.reserve && !in:
		b.heldAt[port] = int32(len(b.held))
		b.held = append(b.held, int32(port))
	case bytes <= b.reserve && in:
		i := b.heldAt[port]
		last := b.held[len(b.held)-1]
		b.held[i], b.heldAt[last] = last, i
		b.held = b.held[:len(b.held)-1]
		b.heldAt[port] = -1
	}
}

// Ingress is the port's ingress occupancy as last set.
func (b *SwitchBuffer) Ingress(port int) float64 { return b.ports[port].ingress }

// sharedAt is the shared-pool part of an occupancy x of port p (SwitchMmu::GetSharedUsed: bytes
// above the reserve, headroom excluded).
func (b *SwitchBuffer) sharedAt(p *pfcPort, x float64) float64 {
	s := x - b.reserve
	if s <= 0 {
		return 0
	}
	if p.paused && s > p.sharedCap {
		return p.sharedCap
	}
	return s
}

// PortSharedUsed is the port's use of the shared pool (ns-3 GetSharedUsed): its occupancy above the
// reserve, less what counts as headroom.
func (b *SwitchBuffer) PortSharedUsed(port int) float64 {
	p := &b.ports[port]
	return b.sharedAt(p, p.ingress)
}

// HeadroomUsed is the part of the port's occupancy that sits in its headroom (ns-3 hdrm_bytes): what
// arrived after the port was paused, above its shared use at that moment. It is 0 while unpaused.
func (b *SwitchBuffer) HeadroomUsed(port int) float64 {
	p := &b.ports[port]
	if !p.paused {
		return 0
	}
	h := p.ingress - b.reserve - p.sharedCap
	if h <= 0 {
		return 0
	}
	return h
}

// SharedUsed returns the shared-buffer bytes in use given every port's ingress occupancy
// (Σ max(0, ingress − reserve), less headroom use): ns-3's shared_used_bytes.
func (b *SwitchBuffer) SharedUsed() float64 {
	b.sums()
	return b.suf[0]
}

// sums refreshes the cached prefix and suffix sums.
func (b *SwitchBuffer) sums() {
	if b.sharedValid {
		return
	}
	h := b.held
	slices.Sort(h) // mostly in order from the last time: only ports that came or went moved
	for k, port := range h {
		b.heldAt[port] = int32(k)
	}
	n := len(h)
	b.pre, b.suf = b.pre[:n+1], b.suf[:n+1] // room for every port from NewSwitchBuffer
	b.pre[0], b.suf[n] = 0, 0
	for k, port := range h {
		p := &b.ports[port]
		b.pre[k+1] = b.pre[k] + b.sharedAt(p, p.ingress)
	}
	for k := n - 1; k >= 0; k-- {
		p := &b.ports[h[k]]
		b.suf[k] = b.suf[k+1] + b.sharedAt(p, p.ingress)
	}
	b.sharedValid = true
}

// othersShared is the shared use of every port but port, from the cached sums. The level
// queries and the predicates use the same sum, so a level is exactly where its predicate flips.
func (b *SwitchBuffer) othersShared(port int) float64 {
	b.sums()
	// below: the held ports under port; above: the first held port past it.
	below := int(b.heldAt[port])
	above := below + 1
	if below < 0 {
		below, _ = slices.BinarySearch(b.held, int32(port))
		above = below
	}
	return b.pre[below] + b.suf[above]
}

// pauseAt is CheckShouldPause's comparison for an unpaused port at occupancy x with the other ports'
// shared use fixed at others.
func (b *SwitchBuffer) pauseAt(p *pfcPort, x, others float64) bool {
	own := x - b.reserve
	if own < 0 {
		own = 0
	}
	return own >= b.threshold(p, others+own)
}

// resumeAt is CheckShouldResume's test for a paused port at occupancy x whose shared use was
// sharedCap when it paused, with the other ports' shared use fixed at others.
func (b *SwitchBuffer) resumeAt(p *pfcPort, x, sharedCap, others float64) bool {
	own := x - b.reserve
	if own <= 0 {
		return true // shared_used == 0 and no headroom bytes
	}
	if own > sharedCap {
		return false // headroom not drained yet (hdrm_bytes > 0)
	}
	return own+b.resumeOffset <= b.threshold(p, others+own)
}

// ShouldPause reports whether the port is not paused and its shared use has reached its threshold
// (ns-3 CheckShouldPause). ns-3 also pauses on any headroom use; an unpaused port has none here.
func (b *SwitchBuffer) ShouldPause(port int) bool {
	p := &b.ports[port]
	return !p.paused && b.pauseAt(p, p.ingress, b.othersShared(port))
}

// ShouldResume reports whether the port is paused, its headroom is empty, and its shared use is 0 or
// at least ResumeOffset below its threshold (ns-3 CheckShouldResume).
func (b *SwitchBuffer) ShouldResume(port int) bool {
	p := &b.ports[port]
	return p.paused && b.resumeAt(p, p.ingress, p.sharedCap, b.othersShared(port))
}

// SetPaused records that the caller paused (sent XOFF upstream) or resumed the port (SetPause,
// SetResume). Pausing freezes the port's shared use at its current value: later arrivals count as
// headroom until they drain.
func (b *SwitchBuffer) SetPaused(port int, paused bool) {
	p := &b.ports[port]
	if paused && !p.paused {
		p.sharedCap = math.Max(0, p.ingress-b.reserve)
	}
	switch {
	case paused && !p.paused:
		b.paused++
	case !paused && p.paused:
		b.paused--
	}
	p.paused = paused
	b.sharedValid = false
}

// cannotPauseMargin is the relative margin by which CannotPause wants every port below its
// level: far above the rounding of the sums involved (~1e-15 relative), so that a port CannotPause
// rules out is one the exact predicate would not pause either.
const cannotPauseMargin = 1e-9

// CannotPause reports that no port can pause at the current occupancies, in O(held ports) and
// without the sums the exact predicates need (CannotPauseGiven, with the sums over the held ports).
func (b *SwitchBuffer) CannotPause() bool {
	total, most := 0.0, 0.0
	for _, port := range b.held {
		p := &b.ports[port]
		y := p.ingress - b.reserve // > 0 for a held port
		total += y
		most = max(most, y*p.divisor)
	}
	return b.CannotPauseGiven(total, most)
}

// CannotPauseGiven reports that no port can pause, given the switch's total shared use (the sum
// over the ports of max(0, ingress − reserve)) and the largest of those shared uses times its
// port's 2^shift, as the caller computed them from the occupancies it set. With every port
// unpaused, a port's shared use y pauses it when y ≥ (P − O − y)/2^s, O being the others' shared
// use (ShouldPause); with T = O + y the total shared use this is y·2^s ≥ P − T. So while every
// port's y·2^s stays below P − T by the margin, ShouldPause is false for every port. It is false
// whenever a port is paused (a resume needs the exact test) or the margin is thin; callers then
// ask every port.
func (b *SwitchBuffer) CannotPauseGiven(total, most float64) bool {
	if b.paused > 0 {
		return false
	}
	free := b.pool - total
	return free > 0 && most < free*(1-cannotPauseMargin)
}

// SharedPool is P, the part of the buffer the ports' dynamic thresholds share (BufferBytes −
// Σheadroom − Σreserve): with every port unpaused, no port pauses while each one's shared use
// times its 2^shift stays below P less the shared use of all (CannotPauseGiven).
func (b *SwitchBuffer) SharedPool() float64 { return b.pool }

// Paused reports whether the port is paused.
func (b *SwitchBuffer) Paused(port int) bool { return b.ports[port].paused }

// PauseLevel is the ingress occupancy of port at which ShouldPause becomes true (for occupancies at
// or above it), holding the other ports' occupancies fixed; for a paused port it is the level as if
// the port were unpaused. The threshold counts the port's own shared use, so with y = x − reserve,
// O the other ports' shared use, P = buffer − Σheadroom − Σreserve and s the shift, the level solves
// y = (P − O − y) / 2^s, i.e. y = (P − O) / (2^s + 1). If the pool is exhausted (P ≤ O) the threshold
// is 0 and an empty port already qualifies: the level is 0 (an empty share also resumes then, so
// ns-3 would alternate pause and resume; only an overdrawn pool gets there).
//
// The level is exact for the predicate: ShouldPause is true at the returned occupancy and false at the
// next smaller float64. Other ports' occupancies move the level, so the caller recomputes it when they
// change.
func (b *SwitchBuffer) PauseLevel(port int) float64 {
	p := &b.ports[port]
	others := b.othersShared(port)
	free := b.pool - others
	if free <= 0 {
		return 0
	}
	// Round-off in the analytic level can be many ulps of x when P and O nearly cancel; the search
	// makes the level exact for the predicate.
	return firstTrue(b.reserve+free/(p.divisor+1), func(x float64) bool { return b.pauseAt(p, x, others) })
}

// ResumeLevel is the ingress occupancy of port at or below which ShouldResume is true (the port being
// paused), holding the other ports' occupancies fixed. With the notation of PauseLevel and R the
// resume offset, y + R ≤ (P − O − y) / 2^s gives y ≤ (P − O − R·2^s) / (2^s + 1); when that is
// negative only an empty shared share (x ≤ reserve) resumes. A paused port must also have drained
// its headroom, so y never exceeds its shared use at pause time. For an unpaused port the level is
// computed as if it had paused with no headroom use.
//
// The level is exact for the predicate: ShouldResume is true at the returned occupancy and false at
// the next larger float64.
func (b *SwitchBuffer) ResumeLevel(port int) float64 {
	p := &b.ports[port]
	others := b.othersShared(port)
	sharedCap := math.Inf(1)
	if p.paused {
		sharedCap = p.sharedCap
	}
	y := (b.pool - others - float64(b.resumeOffset*p.divisor)) / (p.divisor + 1)
	if y < 0 {
		y = 0
	}
	if y > sharedCap {
		y = sharedCap
	}
	// ShouldResume holds at 0 (nothing above the reserve) and fails from the first occupancy that
	// does not resume on; the level is the float64 just below it.
	x := firstTrue(b.reserve+y, func(x float64) bool { return !b.resumeAt(p, x, sharedCap, others) })
	return math.Nextafter(x, 0)
}

// firstTrue is the smallest non-negative float64 at which pred, false then true as x grows, is true,
// searched from the estimate x0: a doubling step outwards to bracket the change, then bisection.
func firstTrue(x0 float64, pred func(float64) bool) float64 {
	if x0 < 0 {
		x0 = 0
	}
	step := math.Max(math.Abs(x0)*1e-15, 1e-9)
	lo, hi := x0, x0
	if pred(x0) {
		for {
			lo = x0 - step
			if lo <= 0 {
				if pred(0) {
					return 0
				}
				lo = 0
				break
			}
			if !pred(lo) {
				break
			}
			hi = lo
			step *= 2
		}
	} else {
		for {
			hi = x0 + step
			if pred(hi) {
				break
			}
			lo = hi
			step *= 2
		}
	}
	// Invariant: pred(lo) false, pred(hi) true.
	for {
		mid := lo + float64((hi-lo)/2)
		if mid <= lo || mid >= hi {
			return hi
		}
		if pred(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
}
