package lecture

import (
	"runtime"
	"sync"
)

// fanOutShare is the fewest followers one goroutine of a fan-out takes: below it a
// goroutine's start and wait cost more than the sends it would share.
const fanOutShare = 256

// FanOut offers one frame to followers 0..n-1 (send(i) offers it to follower i) and
// returns those that refused it, in increasing order. A large audience is split in
// shares sent at once on up to GOMAXPROCS goroutines, this one included: offering a
// frame to a follower is mostly its socket's write system call (web/socket writes a
// shared frame from the sender's goroutine), and 5,000 of them one after the other
// would keep the last follower waiting for all the others on one core. FanOut returns
// once every follower was offered the frame, so a follower gets the frames of
// successive calls in order. send must be safe to call for different followers at once.
func FanOut(n int, send func(i int) bool) (refused []int) {
	shares := min(runtime.GOMAXPROCS(0), n/fanOutShare)
	if shares <= 1 {
		return sendRange(0, n, send, nil)
	}
	out := make([][]int, shares)
	var wg sync.WaitGroup
	for k := 1; k < shares; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[k] = sendRange(k*n/shares, (k+1)*n/shares, send, nil)
		}()
	}
	refused = sendRange(0, n/shares, send, nil)
	wg.Wait()
	for _, r := range out[1:] {
		refused = append(refused, r...)
	}
	return refused
}

func sendRange(from, to int, send func(i int) bool, refused []int) []int {
	for i := from; i < to; i++ {
		if !send(i) {
			refused = append(refused, i)
		}
	}
	return refused
}
