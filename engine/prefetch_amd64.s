#include "textflag.h"

// func Prefetch(p unsafe.Pointer)
TEXT ·Prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func PrefetchSpan(p unsafe.Pointer, n uintptr)
TEXT ·PrefetchSpan(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	ADDQ AX, CX
	ANDQ $~63, AX
loop:
	CMPQ AX, CX
	JAE done
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP loop
done:
	RET

// func PrefetchEach(base unsafe.Pointer, size uintptr, idx []int32)
TEXT ·PrefetchEach(SB), NOSPLIT|NOFRAME, $0-40
	MOVQ base+0(FP), AX
	MOVQ size+8(FP), BX
	MOVQ idx_base+16(FP), SI
	MOVQ idx_len+24(FP), CX
each:
	TESTQ CX, CX
	JZ eachdone
	MOVLQSX (SI), DX
	IMULQ BX, DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $4, SI
	DECQ CX
	JMP each
eachdone:
	RET
