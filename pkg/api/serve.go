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

// Listen binds addr for Serve, so that a bad address fails at start.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(context.WithoutCancel(ctx), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http: cannot listen on %q: %w", addr, err)
	}
	return ln, nil
}

// Serve serves h on ln until ctx is cancelled, then shuts down (5s for
// open requests) and returns nil, or the server's error. Connections
// are not capped, which would let silent clients lock out scrapes; they
// time out instead.
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
	case err := <-errc: // Serve closed ln
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
