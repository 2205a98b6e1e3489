package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Listen binds addr for Serve, before the first round: an address the
// daemon cannot have stops it at start, not later without metrics.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(context.WithoutCancel(ctx), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http: cannot listen on %q: %w", addr, err)
	}
	return ln, nil
}

// Serve serves h on ln until ctx is cancelled, then shuts down
// gracefully (5s for open requests), closes ln and returns nil; or
// returns the server's error if serving fails.
//
// Connections are not counted, only requests (limit.go): one that sends
// no request within ReadHeaderTimeout, or none after the last within
// IdleTimeout, is closed; until then it costs a parked goroutine and
// its buffers (about 14 KiB). A cap on connections would let clients
// that connect and say nothing lock out every scrape and health check.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *zap.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	log.Info("serving HTTP", zap.Stringer("addr", ln.Addr()))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		// Serve closed ln itself.
		return fmt.Errorf("http: serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("HTTP shutdown timed out; closing connections", zap.Error(err))
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http: serve on %s: %w", ln.Addr(), err)
	}
	log.Info("HTTP server stopped", zap.Stringer("addr", ln.Addr()))
	return nil
}
