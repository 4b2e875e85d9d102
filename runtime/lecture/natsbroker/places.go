package natsbroker

import "time"

// Follower places of the lectures of other servers, by client, as this server's
// followers hold them. The presenter's server counts every server's (lecture's
// places.go): this server asks it for each place (the place question) and tells it,
// with its follower count every heartbeat, what its followers hold now; a report
// stands for three heartbeats, so the places of a server that went away lapse.

// addPlace counts d more places of lecture code for client.
func (b *Broker) addPlace(code, client string, d int) {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	if b.places == nil {
		b.places = make(map[string]map[string]int)
	}
	by := b.places[code]
	if by == nil {
		by = make(map[string]int)
		b.places[code] = by
	}
	if by[client] += d; by[client] <= 0 {
		delete(by, client)
	}
	if len(by) == 0 {
		delete(b.places, code)
	}
}

// placesOf is a copy of the places held of lecture code, by client (nil: none).
func (b *Broker) placesOf(code string) map[string]int {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	by := b.places[code]
	if len(by) == 0 {
		return nil
	}
	c := make(map[string]int, len(by))
	for k, v := range by {
		c[k] = v
	}
	return c
}

// placesLast is how long a server's report of its places stands.
func (b *Broker) placesLast() time.Duration { return 3 * b.opts.Heartbeat }
