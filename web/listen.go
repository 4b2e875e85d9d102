package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// serve listens, reports the bound address, and serves until ctx ends. Then it shuts
// down gracefully, within Options.ShutdownTimeout:
//
//  1. readiness goes false (/readyz 503) and every WebSocket is closed with 1001
//     "server shutting down" after the frames already queued for it;
//  2. the listener closes and the HTTP requests in progress finish (http.Server.Shutdown);
//  3. lectures and sessions end and the WebSocket handlers return (Server.Close).
//
// Past the deadline the remaining HTTP connections are cut (http.Server.Close); the
// WebSocket handlers end on their own within one write deadline, since their
// connections are closed from the writer's side.
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
		s.drain()
		s.Close()
		return err
	case <-ctx.Done():
	}
	start := time.Now()
	s.opts.Logger.Info("shutting down", "timeout", s.opts.ShutdownTimeout)
	s.drain()
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err = hs.Shutdown(sctx)
	if err != nil {
		_ = hs.Close()
		err = fmt.Errorf("shutdown: requests still running after %v were cut: %w", s.opts.ShutdownTimeout, err)
	}
	s.Close()
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	s.opts.Logger.Info("shut down", "took", time.Since(start).Round(time.Millisecond))
	return err
}
