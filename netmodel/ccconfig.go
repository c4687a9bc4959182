package netmodel

import (
	"fmt"

	"simd/cc"
	"simd/configs"
	"simd/netmodel/ccfluid"
	"simd/netmodel/fluid"
)

// Congestion-control modes of SimAI.conf's CC_MODE (ns-3 rdma-hw.cc).
const (
	CCModeDCQCN    = 1
	CCModeHPCC     = 3
	CCModeTIMELY   = 7
	CCModeDCTCP    = 8
	CCModeHPCCPINT = 10
)

// CCOn reports whether c's CC_MODE asks for rate control: whether CCConfig gives a network
// with congestion control (or an error), without computing it.
func CCOn(c *configs.SimAIConf) bool {
	switch c.CCMode {
	case CCModeDCQCN, CCModeHPCC, CCModeDCTCP, CCModeTIMELY, CCModeHPCCPINT:
		return true
	}
	return false
}

// CCConfig turns a SimAI.conf into the congestion-controlled network's configuration over fab.
// on is false when CC_MODE asks for no rate control (0, or any value ns-3 does not know): the
// event mode then uses the ideal max-min model. seed picks marked packets' flows. TIMELY and
// HPCC-PINT, which the event mode does not model, are an error naming them.
func CCConfig(c *configs.SimAIConf, fab *Fabric, seed uint64) (cfg ccfluid.Config, on bool, err error) {
	switch c.CCMode {
	case CCModeDCQCN:
		cfg.Mode = ccfluid.ModeDCQCN
	case CCModeHPCC:
		cfg.Mode = ccfluid.ModeHPCC
	case CCModeDCTCP:
		cfg.Mode = ccfluid.ModeDCTCP
	case CCModeTIMELY, CCModeHPCCPINT:
		return cfg, false, fmt.Errorf("CC_MODE %d (%s) is not modelled by the event mode; use 1 (DCQCN), 3 (HPCC), 8 (DCTCP) or 0 (ideal max-min sharing)", c.CCMode, ccModeName(c.CCMode))
	default:
		return cfg, false, nil
	}
	cfg.DCQCN = cc.DCQCNConfig{
		MinRate: c.MinRateBps, RateAI: c.RateAIBps, RateHAI: c.RateHAIBps, G: c.EWMAGain,
		AlphaResumeInterval: c.AlphaResumeInterval, RateDecreaseInterval: c.RateDecreaseInterval,
		RPTimer: c.RPTimer, FastRecoveryTimes: c.FastRecoveryTimes, ClampTargetRate: c.ClampTargetRate,
		RateOnFirstCNP: 1,
	}
	cfg.DCTCP = cc.DCTCPConfig{MinRate: c.MinRateBps, RateAI: c.DCTCPRateAIBps, G: c.EWMAGain}
	cfg.HPCC = cc.HPCCConfig{MinRate: c.MinRateBps, RateAI: c.RateAIBps, UTarget: c.UTarget, MaxStage: c.MIThresh,
		FastReact: c.FastReact, MultiRate: c.MultiRate, PacketBytes: float64(c.PacketPayloadSize)}
	cfg.PacketBytes = float64(c.PacketPayloadSize)
	cfg.PFC = true
	cfg.BufferBytes = float64(c.BufferSizeBytes)
	cfg.NICRate = fab.NICRate()
	cfg.Seed = seed
	if c.HasWin || cfg.Mode == ccfluid.ModeHPCC {
		// Every QP's window and base RTT are SimAI's global maxBdp and maxRtt (GLOBAL_T is
		// forced to 1).
		mx, err := fab.Router.MaxRTTBDP(c.PacketPayloadSize)
		if err != nil {
			return cfg, false, err
		}
		cfg.BaseRTT = mx.RTT
		if c.HasWin {
			cfg.Window, cfg.VarWin = float64(mx.BDP), c.VarWin
		}
	}
	if c.EnableQCN {
		ecn := append([]configs.ECNThreshold(nil), c.ECN...)
		cfg.ECN = func(rate float64) (cc.ECNMarker, bool) {
			for _, e := range ecn {
				if e.RateBps == rate && e.Complete() {
					return cc.ECNMarker{KMin: float64(e.KMinBytes), KMax: float64(e.KMaxBytes), PMax: e.PMax}, true
				}
			}
			return cc.ECNMarker{}, false
		}
	}
	return cfg, true, nil
}

// TransportFor is SimAI's transport for c: packets of PACKET_PAYLOAD_SIZE with SimAI's headers
// (and HPCC's INT header under CC_MODE 3), an ACK per packet, and a flow done when its sender
// has the ACK of its last packet — or, with atArrival, when its last byte reaches the receiver.
func TransportFor(c *configs.SimAIConf, atArrival bool) fluid.Transport {
	var intBytes int64
	if c.CCMode == CCModeHPCC {
		intBytes = fluid.HPCCIntBytes
	}
	t := fluid.SimAITransport(int64(c.PacketPayloadSize), intBytes)
	t.AtAck = !atArrival
	return t
}

func ccModeName(m int) string {
	switch m {
	case CCModeDCQCN:
		return "DCQCN"
	case CCModeHPCC:
		return "HPCC"
	case CCModeTIMELY:
		return "TIMELY"
	case CCModeDCTCP:
		return "DCTCP"
	case CCModeHPCCPINT:
		return "HPCC-PINT"
	}
	return "none"
}
