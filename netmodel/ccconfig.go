package netmodel

import (
	"fmt"

	"simd/cc"
	"simd/configs"
	"simd/netmodel/ccfluid"
)

// Congestion-control modes of SimAI.conf's CC_MODE (ns-3 rdma-hw.cc).
const (
	CCModeDCQCN    = 1
	CCModeHPCC     = 3
	CCModeTIMELY   = 7
	CCModeDCTCP    = 8
	CCModeHPCCPINT = 10
)

// CCConfig turns a SimAI.conf into the congestion-controlled network's configuration. on is
// false when CC_MODE asks for no rate control (0, or any value ns-3 does not know): the event
// mode then uses the ideal max-min model. seed picks marked packets' flows. A mode the event
// mode does not model yet is an error naming it.
func CCConfig(c *configs.SimAIConf, nicRate float64, seed uint64) (cfg ccfluid.Config, on bool, err error) {
	switch c.CCMode {
	case CCModeDCQCN:
	case CCModeHPCC, CCModeTIMELY, CCModeDCTCP, CCModeHPCCPINT:
		return cfg, false, fmt.Errorf("CC_MODE %d (%s) is not modelled by the event mode yet; use 1 (DCQCN) or 0 (ideal max-min sharing)", c.CCMode, ccModeName(c.CCMode))
	default:
		return cfg, false, nil
	}
	cfg = ccfluid.Config{
		DCQCN: cc.DCQCNConfig{
			MinRate: c.MinRateBps, RateAI: c.RateAIBps, RateHAI: c.RateHAIBps, G: c.EWMAGain,
			AlphaResumeInterval: c.AlphaResumeInterval, RateDecreaseInterval: c.RateDecreaseInterval,
			RPTimer: c.RPTimer, FastRecoveryTimes: c.FastRecoveryTimes, ClampTargetRate: c.ClampTargetRate,
			RateOnFirstCNP: 1,
		},
		PacketBytes: float64(c.PacketPayloadSize),
		PFC:         true,
		BufferBytes: float64(c.BufferSizeBytes),
		NICRate:     nicRate,
		Seed:        seed,
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
