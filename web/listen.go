package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// serve listens, reports the bound address, and serves until ctx ends; then it stops
// taking requests, lets running ones finish (briefly), and closes the sessions, which
// ends the WebSocket connections that Shutdown does not track.
func serve(ctx context.Context, hs *http.Server, s *Server, ready func(addr string)) error {
	ln, err := net.Listen("tcp", hs.Addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = hs.Shutdown(sctx)
	s.Close()
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
