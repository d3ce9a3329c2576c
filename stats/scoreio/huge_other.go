//go:build !linux

package scoreio

// adviseHuge does nothing but on Linux.
func adviseHuge[T any](col []T) {}
