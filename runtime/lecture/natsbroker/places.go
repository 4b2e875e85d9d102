package natsbroker

import (
	"encoding/json"
	"time"
)

// Follower places of the lectures of other servers, by client, as this server's
// followers hold them (of either stream: protocol 1 or compact). The presenter's
// server counts every server's (lecture's places.go): this server asks it for each
// place (the place question), and every heartbeat tells it what its followers hold
// now (places); a report stands for three heartbeats, so the places of a server that
// went away lapse, and one last empty report gives back a lecture's places as soon as
// its last follower here has left.

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

// reportPlaces publishes, for every lecture of another server, the places this
// server's followers hold by client (the heartbeat's report).
func (b *Broker) reportPlaces() {
	b.pmu.Lock()
	msgs := make(map[string][]byte, len(b.places)+len(b.reported))
	for code, by := range b.places {
		msgs[code], _ = json.Marshal(request{Node: b.opts.Node, Places: by})
	}
	for code := range b.reported {
		if _, ok := msgs[code]; !ok {
			msgs[code], _ = json.Marshal(request{Node: b.opts.Node}) // none left here
		}
	}
	b.reported = make(map[string]bool, len(b.places))
	for code := range b.places {
		b.reported[code] = true
	}
	b.pmu.Unlock()
	if !b.nc.IsConnected() {
		return
	}
	for code, data := range msgs {
		_ = b.nc.Publish(b.subject(code, "rpc.places"), data)
	}
}

// placesLast is how long a server's report of its places stands.
func (b *Broker) placesLast() time.Duration { return 3 * b.opts.Heartbeat }
