package scoreio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back the whole 2 MiB pages inside col's
// memory with huge pages (MADV_HUGEPAGE, where transparent huge pages are
// left to madvise): the rows' columns are tens of MB, first touched as the
// rows are parsed, and each 4 KiB page of them otherwise costs a page
// fault of its own.
func adviseHuge[T any](col []T) {
	var z T
	n := uintptr(cap(col)) * unsafe.Sizeof(z)
	if n < 2*hugePage {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(col))
	skip := (hugePage - uintptr(base)%hugePage) % hugePage // to the first whole huge page
	whole := (n - skip) &^ (hugePage - 1)
	if whole > 0 {
		// A refusal (an old kernel, THP off) leaves the pages as they were.
		_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, skip)), whole), unix.MADV_HUGEPAGE)
	}
}

const hugePage = 2 << 20
