//go:build !linux

package process

// AdviseHugePages does nothing outside Linux: the advice it gives is Linux's madvise.
func AdviseHugePages() (stop func()) { return func() {} }
