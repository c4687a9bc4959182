#include "textflag.h"

// func Prefetch(p unsafe.Pointer)
TEXT ·Prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PLDL1KEEP
	RET

// func PrefetchSpan(p unsafe.Pointer, n uintptr)
TEXT ·PrefetchSpan(SB), NOSPLIT|NOFRAME, $0-16
	MOVD p+0(FP), R0
	MOVD n+8(FP), R1
	ADD R0, R1, R1
	AND $~63, R0, R0
loop:
	CMP R1, R0
	BHS done
	PRFM (R0), PLDL1KEEP
	ADD $64, R0, R0
	B loop
done:
	RET

// func PrefetchEach(base unsafe.Pointer, size uintptr, idx []int32)
TEXT ·PrefetchEach(SB), NOSPLIT|NOFRAME, $0-40
	MOVD base+0(FP), R0
	MOVD size+8(FP), R1
	MOVD idx_base+16(FP), R2
	MOVD idx_len+24(FP), R3
each:
	CBZ R3, eachdone
	MOVW (R2), R4
	MUL R1, R4, R4
	ADD R0, R4, R4
	PRFM (R4), PLDL1KEEP
	ADD $4, R2, R2
	SUB $1, R3, R3
	B each
eachdone:
	RET
