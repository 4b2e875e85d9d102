package ratelimit

import (
	"net/http"
	"net/netip"

	"github.com/go-chi/chi/v5/middleware"
)

// Client is who a request counts against: an IPv4 address, or an IPv6 /64. One IPv6
// subscriber is routinely handed a whole /64 (2^64 addresses), so keying IPv6 by the
// full address would give one client as many buckets and shares as it cares to use.
type Client = netip.Prefix

// ClientOf returns the client of addr: its /32 for IPv4 (IPv4-mapped IPv6 included),
// its /64 for IPv6. An unknown address is the zero Client, one shared key.
func ClientOf(addr netip.Addr) Client {
	addr = addr.Unmap()
	if !addr.IsValid() {
		return Client{}
	}
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, _ := addr.WithZone("").Prefix(bits)
	return p
}

// ClientOfRequest is the client of r, as chi's ClientIP middleware found its address
// (that middleware must run first).
func ClientOfRequest(r *http.Request) Client {
	return ClientOf(middleware.GetClientIPAddr(r.Context()))
}
