package sim

import (
	"strings"
	"testing"
)

// Each invariant the kernel asserts panics with its name when broken. The state is
// broken by hand here: no run of the kernel breaks it (that would be the bug).
func TestInvariantsPanicNamingWhatBroke(t *testing.T) {
	tests := []struct {
		name    string
		want    string
		corrupt func()
	}{
		{"queue taken out of order", "queue order", func() {
			s := &Sim{cfg: Config{Until: 10}}
			s.q.schedule(item{t: 5, kind: itemAction})
			s.q.last = item{t: 6} // a step at t=6 was taken: t=5 is in the past
			s.Step()
		}},
		{"message leaves twice", "in-flight count below zero", func() {
			nw := newNetwork(Network{}, 2)
			nw.leave(&msgSlot{msg: Message{ID: 1}})
		}},
		{"message slot freed twice", "freed twice", func() {
			nw := newNetwork(Network{}, 2)
			slot := nw.msgs.alloc()
			nw.msgs.slots[slot].state = slotLive
			nw.release(slot)
			nw.release(slot)
		}},
		{"delivery of a free slot", "not in use", func() {
			s := &Sim{nw: newNetwork(Network{}, 2)}
			s.deliverSlot(s.nw.msgs.alloc())
		}},
		{"timer disarmed twice", "armed timer count below zero", func() {
			var tm timers
			tm.deactivate(&timerSlot{name: "t"})
		}},
		{"timer fires from a slot the book does not hold", "the book holds it", func() {
			s := &Sim{tm: timers{pool: pool[timerSlot]{slots: []timerSlot{{name: "t", state: slotLive}}}, byNode: []map[string]int32{{}}}}
			s.fireTimer(0)
		}},
		{"end of CS counted off twice", "pending CS ends below zero", func() {
			cs := newCritical(2)
			cs.due[1] = true
			cs.releaseDone(1)
		}},
		{"message counted in flight with nothing queued", "in-flight count is 1", func() {
			s := &Sim{nw: network{inflight: 1}}
			s.HasNext()
		}},
		{"timer counted with nothing queued", "1 timers", func() {
			s := &Sim{tm: timers{active: 1}}
			s.HasNext()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				v := recover()
				msg, _ := v.(string)
				if !strings.HasPrefix(msg, "sim: invariant broken: ") || !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want an invariant naming %q", v, tc.want)
				}
			}()
			tc.corrupt()
		})
	}
}
