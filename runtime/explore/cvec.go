package explore

import "math/bits"

// cvec is an append-only array that any goroutine may read by index while another
// appends: its pages never move (page p holds cvecFirst<<p items), so an item, once
// written, stays where it is. Appends must be serialised by the caller (a lock), and
// a reader must have learnt the index through something that orders it after the
// append (the same lock, or the store, which is written between two phases of the
// search).
type cvec[T any] struct {
	pages [cvecPages][]T
	n     uint32
}

const (
	cvecFirst = 64
	cvecPages = 27 // cvecFirst << 27 items in all: more than a uint32 index reaches
)

// place returns the page and position of item i.
func cvecPlace(i uint32) (int, uint32) {
	p := bits.Len64(uint64(i)/cvecFirst+1) - 1
	return p, i - cvecFirst*(1<<p-1)
}

// add appends a zero item and returns its index and where it is, to be filled in
// before the index is published.
func (v *cvec[T]) add() (uint32, *T) {
	i := v.n
	p, off := cvecPlace(i)
	if v.pages[p] == nil {
		v.pages[p] = make([]T, cvecFirst<<p)
	}
	v.n++
	return i, &v.pages[p][off]
}

func (v *cvec[T]) at(i uint32) *T {
	p, off := cvecPlace(i)
	return &v.pages[p][off]
}
