package sim

// pool holds slots reused through a free list, so a long run keeps no more slots than
// it had in use at once and a step allocates nothing. Slot numbers are stable: the
// queue refers to messages and timers by slot.
type pool[T any] struct {
	slots []T
	free  []int32
}

func (p *pool[T]) alloc() int32 {
	if k := len(p.free); k > 0 {
		slot := p.free[k-1]
		p.free = p.free[:k-1]
		return slot
	}
	var zero T
	p.slots = append(p.slots, zero)
	return int32(len(p.slots) - 1)
}

func (p *pool[T]) release(slot int32) {
	var zero T
	p.slots[slot] = zero
	p.free = append(p.free, slot)
}
