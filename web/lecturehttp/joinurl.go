package lecturehttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/teach-dist/playground/web/ratelimit"
)

// Where students join: the base of the join links and QR codes. A presenter who
// opened the playground at http://localhost:8080 (as the README says) would otherwise
// put a localhost address in the QR code, which a student's phone cannot reach. So:
//
//   - `serve --public-url URL` (or $PUBLIC_URL) names the base outright: behind a
//     proxy, on a course's domain;
//   - without it, a request whose host is a loopback name or address gets the
//     machine's own network addresses (with the request's port) to choose from, and
//     the presenter's page warns that localhost is unreachable from the hall;
//   - otherwise the address the presenter's browser used is the one students use.

// ParsePublicURL checks the base URL of join links: absolute http or https, a host,
// no query or fragment; a trailing slash is dropped. The error says what is wrong.
func ParsePublicURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%q must start with http:// or https:// (students open it in a browser), like https://playground.example.edu", s)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%q has no host name: write the address students type, like https://playground.example.edu", s)
	case u.User != nil:
		return nil, fmt.Errorf("%q has a user name or password: a join link is shown to the whole hall", s)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("%q has a query or fragment: give only the base, like https://playground.example.edu/course", s)
	case !validHost(u.Host):
		return nil, fmt.Errorf("%q: the host %q is not a host name and port", s, u.Host)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// maxLAN bounds the addresses offered: a machine with many interfaces (bridges of
// containers) does not fill the presenter's bar.
const maxLAN = 8

// JoinInfo is what the presenter's page needs to show a join link students can reach
// (the page's data-join, as JSON).
type JoinInfo struct {
	// Base is the join links' base: the public URL, or the address the presenter's
	// browser used.
	Base string `json:"base"`
	// Loopback: the presenter's address is a loopback one, unreachable from students'
	// phones, and no public URL is set; LAN then lists this machine's addresses with
	// the presenter's port, the first one the likeliest.
	Loopback bool     `json:"loopback,omitempty"`
	LAN      []string `json:"lan,omitempty"`
}

// JSON is the info as the page's attribute carries it.
func (j JoinInfo) JSON() string {
	b, _ := json.Marshal(j)
	return string(b)
}

// joinInfo is where students of the presenter's request r join; false when the
// request's Host cannot be part of a URL (and no public URL is set).
func (h *Handlers) joinInfo(r *http.Request) (JoinInfo, bool) {
	if h.PublicURL != nil {
		return JoinInfo{Base: h.PublicURL.String()}, true
	}
	if !validHost(r.Host) {
		return JoinInfo{}, false
	}
	scheme := "http"
	if ratelimit.HTTPS(r) {
		scheme = "https"
	}
	info := JoinInfo{Base: scheme + "://" + r.Host}
	host, port := splitHostPort(r.Host)
	if !isLoopback(host) {
		return info, true
	}
	info.Loopback = true
	interfaces := h.Interfaces
	if interfaces == nil {
		interfaces = net.InterfaceAddrs
	}
	addrs, err := interfaces()
	if err != nil {
		return info, true // no addresses to offer: the warning says to use --public-url
	}
	for _, ip := range lanAddrs(addrs) {
		hp := ip.String()
		if ip.Is6() {
			hp = "[" + hp + "]"
		}
		if port != "" {
			hp += ":" + port
		}
		info.LAN = append(info.LAN, scheme+"://"+hp)
	}
	return info, true
}

// splitHostPort splits a Host header that may have no port.
func splitHostPort(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.Trim(hostport, "[]"), ""
}

// isLoopback reports whether a host name or address names this machine only:
// localhost and its subdomains (RFC 6761), 127.0.0.0/8 and ::1.
func isLoopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

// lanAddrs are the addresses of addrs another machine may reach: unicast, not
// loopback, not link-local; IPv4 first (what a phone on the hall's Wi-Fi most likely
// uses), then IPv6, each in address order, at most maxLAN.
func lanAddrs(addrs []net.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		default:
			continue
		}
		x, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		x = x.Unmap()
		if x.IsLoopback() || x.IsLinkLocalUnicast() || x.IsMulticast() || x.IsUnspecified() || x.IsInterfaceLocalMulticast() {
			continue
		}
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b netip.Addr) int {
		if a.Is4() != b.Is4() {
			if a.Is4() {
				return -1
			}
			return 1
		}
		return a.Compare(b)
	})
	return out[:min(len(out), maxLAN)]
}

var errNotOurAddress = errors.New("base: not one of the addresses this server offers for joining")

// joinBase is the base of the QR code's join URL for r: the base the presenter chose
// among the offered addresses (?base=, checked against them, so the QR endpoint never
// encodes an address of someone else's choosing), or by default the public URL, the
// first network address when the request came through a loopback one, or the
// request's own address.
func (h *Handlers) joinBase(r *http.Request) (string, error) {
	info, ok := h.joinInfo(r)
	if !ok {
		return "", errors.New("the Host header is not a host name")
	}
	asked := r.URL.Query().Get("base")
	if asked == "" && len(info.LAN) > 0 {
		return info.LAN[0], nil
	}
	if asked == "" || asked == info.Base {
		return info.Base, nil
	}
	if !slices.Contains(info.LAN, asked) {
		return "", errNotOurAddress
	}
	return asked, nil
}
