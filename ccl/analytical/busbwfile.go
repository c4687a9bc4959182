package analytical

import (
	"fmt"

	"simd/ccl"
	"simd/configs"
)

// FileModel prices collectives from a busbw.yaml file of fixed bus bandwidths, SimAI's historical
// -busbw input (simai-formats.md §5.5), which the current SimAI_analytical no longer accepts:
// the file's bandwidth replaces the computed bus bandwidth and the efficiency ratio; the
// small-message table and the one-rank rule are those of Model.
//
// Which entry prices which collective: a TP or EP group uses its own section, DP uses DP, DP_EP
// uses EP; all-reduce uses allreduce, all-gather allgather, reduce-scatter reducescatter (falling
// back to allgather, which is what SimAI used for it), all-to-all alltoall in TP and EP sections
// and allgather in the DP section (SimAI's old mapping). A needed entry that is null or absent is
// an error naming it.
type FileModel struct {
	b configs.BusBW
}

// NewFileModel wraps a parsed busbw.yaml.
func NewFileModel(b configs.BusBW) *FileModel { return &FileModel{b: b} }

// PipelineGBps is the file's PP busbw (0 when it gives none).
func (f *FileModel) PipelineGBps() float32 { return float32(f.b.PPBusBW) }

// CollectiveNs prices one collective.
func (f *FileModel) CollectiveNs(op ccl.Op, group ccl.GroupKind, n int, bytes uint64) (uint64, error) {
	if op == ccl.OpNone {
		return 0, nil
	}
	if 1 < bytes && bytes < 1048576 {
		return smallMessageNs(n), nil
	}
	if n <= 1 {
		return 0, nil
	}
	var sec configs.BusBWSection
	var name string
	switch group {
	case ccl.GroupTP:
		sec, name = f.b.TP, "TP"
	case ccl.GroupEP, ccl.GroupDPEP:
		sec, name = f.b.EP, "EP"
	case ccl.GroupDP:
		sec, name = f.b.DP, "DP"
	default:
		return 0, nil
	}
	var bw float64
	var key string
	switch op {
	case ccl.OpAllReduce:
		bw, key = sec.AllReduce, "allreduce"
	case ccl.OpAllGather:
		bw, key = sec.AllGather, "allgather"
	case ccl.OpReduceScatter:
		bw, key = sec.ReduceScatter, "reducescatter"
		if bw == 0 {
			bw, key = sec.AllGather, "allgather"
		}
	case ccl.OpAllToAll:
		bw, key = sec.AllToAll, "alltoall"
		if group == ccl.GroupDP || group == ccl.GroupDPEP {
			bw, key = sec.AllGather, "allgather"
		}
	}
	if !(bw > 0) {
		return 0, fmt.Errorf("%s gives no %s %s bandwidth, which a %s %s on %d ranks needs", f.b.File, name, key, group, op, n)
	}
	return ringTimeNs(op, n, bytes, float32(bw)), nil
}
