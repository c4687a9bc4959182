package route

import (
	"encoding/binary"

	"github.com/twmb/murmur3"
)

// Defaults of SimAI's QPs (network_frontend/ns3/entry.h: SendFlow): the source port of the
// k-th QP between a pair of nodes is 10000+k (portNumber[src][dst]++, starting at 10000, uint16)
// and the destination port is always 100.
const (
	DefaultSport uint16 = 10000
	DefaultDport uint16 = 100
)

// NICSeed is the seed of the hash a sending node uses to choose among its own interfaces:
// ns-3's Hash32 is Murmur3 (x86, 32-bit) seeded with Hash::Function::Murmur3's SEED, 0x8BADF00D.
const NICSeed uint32 = 0x8BADF00D

// QPSport is the source port SimAI gives the qp-th QP (from 0) between one pair of nodes.
func QPSport(qp int) uint16 { return DefaultSport + uint16(qp) }

// NodeIP is the IPv4 address SimAI gives node id (common.h: node_id_to_ip):
// 0x0b000001 + (id/256)·0x10000 + (id%256)·0x100, in uint32 arithmetic as in SimAI (so it wraps
// around for ids beyond about 16 million).
func NodeIP(id int32) uint32 {
	u := uint32(id)
	return 0x0b000001 + (u/256)*0x10000 + (u%256)*0x100
}

// FlowKey is the 12 bytes SimAI hashes for a packet: the source IP, the destination IP and
// sport | dport<<16, each as a little-endian uint32 (the byte image of the uint32 array on the
// x86 hosts SimAI runs on; RdmaQueuePair::GetHash's struct {sip, dip; uint16 sport, dport} has
// the same image).
func FlowKey(sip, dip uint32, sport, dport uint16) [12]byte {
	var k [12]byte
	binary.LittleEndian.PutUint32(k[0:], sip)
	binary.LittleEndian.PutUint32(k[4:], dip)
	binary.LittleEndian.PutUint32(k[8:], uint32(sport)|uint32(dport)<<16)
	return k
}

// Hash is Murmur3 x86 32-bit of key with the given seed: a switch hashes with its node id as
// seed (SwitchNode::EcmpHash, m_ecmpSeed = m_id), a sending NIC with NICSeed.
func Hash(key [12]byte, seed uint32) uint32 {
	return murmur3.SeedSum32(seed, key[:])
}
