package web

import (
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/web/lecturehttp"
)

// fakeInterfaces are a laptop's addresses: loopback, Wi-Fi, a VPN, IPv6 link-local and
// global, and a mapped duplicate.
func fakeInterfaces() ([]net.Addr, error) {
	return fakeInterfacesOnly("127.0.0.1/8", "192.168.1.20/24", "::1/128", "fe80::1/64", "2001:db8::7/64", "10.8.0.5/24", "169.254.3.3/16", "::ffff:192.168.1.20/120")
}

var dataJoin = regexp.MustCompile(`data-join="([^"]*)"`)

// presenterJoin is the join info the presenter's page carries when asked through host.
func presenterJoin(t *testing.T, rig *lectureRig, host string) (lecturehttp.JoinInfo, bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rig.ts.URL+"/lecture/present/"+rig.token, nil)
	req.Host = host
	p := do(t, browser(t), req)
	if p.status != http.StatusOK {
		t.Fatalf("presenter page through %s: %d", host, p.status)
	}
	m := dataJoin.FindStringSubmatch(p.body)
	if m == nil {
		return lecturehttp.JoinInfo{}, false
	}
	var info lecturehttp.JoinInfo
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &info); err != nil {
		t.Fatalf("data-join %q: %v", m[1], err)
	}
	return info, true
}

// qrOf fetches the lecture's QR code through host with query q.
func qrOf(t *testing.T, rig *lectureRig, host, q string) page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rig.ts.URL+"/l/"+rig.code+"/qr.svg"+q, nil)
	req.Host = host
	return do(t, browser(t), req)
}

// qrMust asserts the QR code fetched encodes exactly want.
func qrMust(t *testing.T, got page, want string) {
	t.Helper()
	svg, err := lecture.QRSVG(want)
	if err != nil {
		t.Fatal(err)
	}
	if got.status != http.StatusOK || got.body != string(svg) {
		t.Fatalf("the QR code (%d) is not the one of %s", got.status, want)
	}
}

// Students' phones must reach the join link. With --public-url it is
// the base of every join link and QR code, whatever address the presenter used.
func TestJoinLinksUseThePublicURL(t *testing.T) {
	pub, err := lecturehttp.ParsePublicURL("https://class.example.edu/pg/")
	if err != nil {
		t.Fatal(err)
	}
	rig := startLecture(t, Options{PublicURL: pub, Interfaces: fakeInterfaces}, "/play/ricart-agrawala?n=3")
	for _, host := range []string{"localhost:8080", "10.8.0.5:8080"} {
		info, ok := presenterJoin(t, rig, host)
		if !ok || info.Base != "https://class.example.edu/pg" || info.Loopback || len(info.LAN) != 0 {
			t.Fatalf("through %s the presenter's page says %+v", host, info)
		}
		qrMust(t, qrOf(t, rig, host, ""), "https://class.example.edu/pg/l/"+rig.code)
	}
	if p := qrOf(t, rig, "localhost:8080", "?base="+url.QueryEscape("http://192.168.1.20:8080")); p.status != http.StatusBadRequest {
		t.Fatalf("a base other than the public URL: %d", p.status)
	}
}

// Without a public URL, a presenter on a loopback address is offered this machine's
// network addresses (reachable ones only, IPv4 first, with the presenter's port), and
// the QR code encodes the one chosen, never an address the server does not offer.
func TestJoinLinksOfALoopbackPresenterOfferTheNetworkAddresses(t *testing.T) {
	rig := startLecture(t, Options{Interfaces: fakeInterfaces, AllowedHosts: []string{"class.example.edu"}}, "/play/ricart-agrawala?n=3")
	lan := []string{"http://10.8.0.5:8080", "http://192.168.1.20:8080", "http://[2001:db8::7]:8080"}
	for _, host := range []string{"localhost:8080", "127.0.0.1:8080", "[::1]:8080", "app.localhost:8080"} {
		info, ok := presenterJoin(t, rig, host)
		if !ok || !info.Loopback || info.Base != "http://"+host || !slices.Equal(info.LAN, lan) {
			t.Fatalf("through %s the presenter's page says %+v, want loopback with %v", host, info, lan)
		}
	}
	qrMust(t, qrOf(t, rig, "localhost:8080", ""), lan[0]+"/l/"+rig.code)
	qrMust(t, qrOf(t, rig, "localhost:8080", "?base="+url.QueryEscape(lan[1])), lan[1]+"/l/"+rig.code)
	for _, base := range []string{"http://evil.example", "http://192.168.1.21:8080", "http://192.168.1.20:9999"} {
		p := qrOf(t, rig, "localhost:8080", "?base="+url.QueryEscape(base))
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "base: not one of the addresses") {
			t.Fatalf("QR of base %s: %d %q", base, p.status, p.body)
		}
	}

	// A presenter on a name students can reach gets it as it is, nothing more.
	info, _ := presenterJoin(t, rig, "class.example.edu:8443")
	if info.Base != "http://class.example.edu:8443" || info.Loopback || info.LAN != nil {
		t.Fatalf("a reachable host: %+v", info)
	}
	qrMust(t, qrOf(t, rig, "class.example.edu:8443", ""), "http://class.example.edu:8443/l/"+rig.code)

	// Only the presenter's page says it: a follower's page has no data-join.
	if p := get(t, browser(t), rig.ts.URL+"/l/"+rig.code); dataJoin.MatchString(p.body) {
		t.Fatal("a follower's page carries the join info")
	}
}

// A loopback presenter on a machine without a network address gets the warning and no
// address (the page then says to use --public-url).
func TestJoinLinksOfALoopbackPresenterWithoutNetwork(t *testing.T) {
	none := func() ([]net.Addr, error) { return fakeInterfacesOnly("127.0.0.1/8", "::1/128") }
	rig := startLecture(t, Options{Interfaces: none}, "/play/ricart-agrawala?n=3")
	info, _ := presenterJoin(t, rig, "localhost:8080")
	if !info.Loopback || len(info.LAN) != 0 {
		t.Fatalf("%+v", info)
	}
	qrMust(t, qrOf(t, rig, "localhost:8080", ""), "http://localhost:8080/l/"+rig.code)
}

// do sends req with c and reads the answer.
func do(t *testing.T, c *http.Client, req *http.Request) page {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{resp.StatusCode, string(b), resp.Header}
}

func fakeInterfacesOnly(cidrs ...string) ([]net.Addr, error) {
	var out []net.Addr
	for _, c := range cidrs {
		ip, n, err := net.ParseCIDR(c)
		if err != nil {
			return nil, err
		}
		n.IP = ip
		out = append(out, n)
	}
	return out, nil
}
