module simd

go 1.26

require (
	github.com/emirpasic/gods v1.18.1
	github.com/emirpasic/gods/v2 v2.0.0-alpha
	github.com/twmb/murmur3 v1.2.2
	go.uber.org/zap v1.28.0
	gonum.org/v1/gonum v0.17.0
)

require go.uber.org/multierr v1.10.0 // indirect
